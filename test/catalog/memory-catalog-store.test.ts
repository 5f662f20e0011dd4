import { MemoryCatalogStore } from "../../src/catalog/memory-catalog-store.js";
import { describeCatalogStoreContract } from "./catalog-store-contract.js";

describeCatalogStoreContract("memory", (clock) => new MemoryCatalogStore({ clock }));
