import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WaiterQueue } from "../../src/store/waiter-queue.js";

const push = (queue: WaiterQueue, id: string) => queue.push(id, 0, 1_000, { id });
/** The head's slot id, or undefined when none waits; checks the head's other fields too. */
const head = (queue: WaiterQueue): string | undefined => {
  if (!queue.peek()) return undefined;
  expect(queue.headToken).toEqual({ id: queue.headSlotId });
  expect(queue.headEnqueuedAt).toBe(0);
  expect(queue.headDeadline).toBe(1_000);
  return queue.headSlotId;
};

describe("WaiterQueue", () => {
  it("serves head first, skipping cancelled waiters", () => {
    const queue = new WaiterQueue();
    for (const id of ["w1", "w2", "w3", "w4"]) push(queue, id);
    expect(queue.remove("w1")).toBe(true);
    expect(queue.remove("w3")).toBe(true);
    expect(queue.remove("w3")).toBe(false);
    expect(queue.size).toBe(2);
    expect(queue.ids()).toEqual(["w2", "w4"]);
    expect(head(queue)).toBe("w2");
    queue.shift();
    // A waiter pushed after the first cancel is still found by a later cancel.
    push(queue, "w5");
    expect(queue.remove("w2")).toBe(false);
    expect(head(queue)).toBe("w4");
    queue.shift();
    expect(queue.remove("w5")).toBe(true);
    expect(queue.size).toBe(0);
    expect(head(queue)).toBeUndefined();
    expect(queue.remove("w5")).toBe(false);
  });

  it("keeps its order across the compaction of a long queue", () => {
    const queue = new WaiterQueue();
    for (let i = 0; i < 5_000; i++) push(queue, `w${i}`);
    expect(queue.remove("w4000")).toBe(true);
    for (let i = 0; i < 3_000; i++) {
      expect(head(queue)).toBe(`w${i}`);
      queue.shift();
    }
    expect(queue.remove("w4001")).toBe(true);
    expect(queue.size).toBe(1_998);
    const ids = queue.ids();
    expect(ids[0]).toBe("w3000");
    expect(ids).not.toContain("w4000");
    expect(ids).not.toContain("w4001");
  });

  it("serves and cancels across compactions, in batches of any length", () => {
    const queue = new WaiterQueue();
    let next = 0;
    for (const batch of [1_024, 1_500, 2_048, 700]) {
      const ids: string[] = [];
      for (let i = 0; i < batch; i++) {
        const id = `w${next++}`;
        push(queue, id);
        ids.push(id);
      }
      // Cancel every third waiter (the first cancel builds the index), serve the rest.
      for (let i = 0; i < batch; i += 3) expect(queue.remove(ids[i]!)).toBe(true);
      for (let i = 0; i < batch; i++) {
        if (i % 3 === 0) continue;
        expect(head(queue)).toBe(ids[i]);
        queue.shift();
      }
      expect(queue.size).toBe(0);
      expect(head(queue)).toBeUndefined();
      expect(queue.remove(ids[1]!)).toBe(false);
    }
  });

  it("behaves as a plain FIFO with removals under any sequence of operations", () => {
    const op = fc.oneof(
      fc.constant({ kind: "push" as const }),
      fc.constant({ kind: "shift" as const }),
      fc.record({ kind: fc.constant("remove" as const), pick: fc.nat(5_000) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 5_000 }), (ops) => {
        const queue = new WaiterQueue();
        const model: string[] = [];
        let next = 0;
        for (const step of ops) {
          if (step.kind === "push") {
            const id = `w${next++}`;
            push(queue, id);
            model.push(id);
          } else if (step.kind === "shift") {
            expect(head(queue)).toBe(model[0]);
            if (model.length > 0) {
              queue.shift();
              model.shift();
            }
          } else {
            const id = `w${step.pick % Math.max(1, next)}`;
            const at = model.indexOf(id);
            expect(queue.remove(id)).toBe(at >= 0);
            if (at >= 0) model.splice(at, 1);
          }
          expect(queue.size).toBe(model.length);
        }
        expect(queue.ids()).toEqual(model);
      }),
      { seed: 0x5_1_1_c_e, numRuns: 100 },
    );
  });
});
