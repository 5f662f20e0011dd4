import type { SignedIn } from "../../../src/auth/auth-service.js";
import { Layout } from "./layout.js";

/** A page that only says something (an error, a refusal), with an optional way on. */
export function MessagePage(props: {
  title: string;
  message: string;
  link?: string;
  signedIn?: SignedIn;
}) {
  return (
    <Layout title={props.title} signedIn={props.signedIn}>
      <h1>{props.title}</h1>
      <p class="notice bad">{props.message}</p>
      {props.link ? (
        <p>
          <a href={props.link}>Continue</a>
        </p>
      ) : (
        <p>
          <a href="/">Back to the overview</a>
        </p>
      )}
    </Layout>
  );
}
