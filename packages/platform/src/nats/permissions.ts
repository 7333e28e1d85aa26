import { busNames } from "@steward/contract";
import type { ServiceIdentity } from "../identities";
import { natsInboxPrefix } from "./credentials";

/** A NATS user's subject permissions, as nats-server's configuration spells them. */
export interface NatsPermissions {
  readonly publish: { readonly allow: readonly string[]; readonly deny?: readonly string[] };
  readonly subscribe: { readonly allow: readonly string[]; readonly deny?: readonly string[] };
  /** May answer a request it received (a status ping) on the requester's reply subject, and only that. */
  readonly allow_responses?: boolean;
}

/** The policy service's activation broadcast (packages/pdp/src/adapters/nats/invalidation.ts). */
function activationSubject(namespace: string): string {
  return `${namespace ? `${namespace}.` : ""}steward.policy.activated`;
}

/**
 * What each service may do on the bus (SPEC §10), for the subjects and streams of `namespace`:
 * - gateway: publishes commands and event copies (its outbox relay), reads run events and token deltas (SSE),
 *   provisions the streams, asks for status, hears the activation broadcast (its route guard decides in process);
 * - agent-runner: pulls commands from its consumer and acknowledges them, publishes event copies, token deltas
 *   and dead letters, watches cancellations; never publishes a command or reads deltas;
 * - policy: publishes and hears the activation broadcast, which nobody else may publish;
 * - tool-exec: no NATS at all.
 * Each subscribes to replies on its own inbox prefix only and answers status pings through allow_responses.
 * JetStream's API is open only for Steward's own streams and the runners' consumer.
 */
export function natsPermissions(service: ServiceIdentity, namespace = ""): NatsPermissions {
  const names = busNames(namespace);
  const s = namespace ? `${namespace}.` : "";
  const streams = [names.commandStream, names.eventStream, names.deadLetterStream];
  const provision = ["$JS.API.INFO", ...streams.flatMap((st) => ["INFO", "CREATE", "UPDATE"].map((op) => `$JS.API.STREAM.${op}.${st}`))];
  const consumer = `${names.commandStream}.${names.runnerConsumer}`;
  const inbox = `${natsInboxPrefix(service)}.>`;
  switch (service) {
    case "gateway":
      return {
        publish: {
          allow: [names.runRequested, `${s}agent.events.>`, names.statusPing, ...provision, `$JS.API.CONSUMER.INFO.${consumer}`],
        },
        subscribe: { allow: [inbox, `${s}agent.events.>`, `${s}agent.deltas.>`, names.statusPing, activationSubject(namespace)] },
        allow_responses: true,
      };
    case "agent-runner":
      return {
        publish: {
          allow: [
            `${s}agent.events.>`,
            `${s}agent.deltas.>`,
            names.deadLetterRunRequested,
            ...provision,
            `$JS.API.CONSUMER.INFO.${consumer}`,
            `$JS.API.CONSUMER.CREATE.${consumer}`,
            `$JS.API.CONSUMER.CREATE.${consumer}.>`,
            `$JS.API.CONSUMER.DURABLE.CREATE.${consumer}`,
            `$JS.API.CONSUMER.MSG.NEXT.${consumer}`,
            `$JS.ACK.${consumer}.>`,
          ],
          deny: [names.runRequested, activationSubject(namespace)],
        },
        subscribe: { allow: [inbox, `${s}agent.events.*.run.cancel_requested`, names.statusPing], deny: [`${s}agent.deltas.>`] },
        allow_responses: true,
      };
    case "policy":
      return {
        publish: { allow: [activationSubject(namespace)] },
        subscribe: { allow: [inbox, activationSubject(namespace), names.statusPing] },
        allow_responses: true,
      };
    case "tool-exec":
      return { publish: { allow: [], deny: [">"] }, subscribe: { allow: [], deny: [">"] } };
  }
}

const quote = (text: string): string => JSON.stringify(text);
const list = (items: readonly string[]): string => `[${items.map(quote).join(", ")}]`;

function permissionsBlock(p: NatsPermissions): string {
  const side = (name: string, rules: NatsPermissions["publish"]) => {
    const parts = [rules.allow.length ? `allow: ${list(rules.allow)}` : "", rules.deny?.length ? `deny: ${list(rules.deny)}` : ""];
    return `${name}: { ${parts.filter(Boolean).join(", ")} }`;
  };
  return `{ ${side("publish", p.publish)}, ${side("subscribe", p.subscribe)}${p.allow_responses ? ", allow_responses: true" : ""} }`;
}

/**
 * The `authorization` block of a nats-server configuration (`nats-server -js -c <file>`): one user per service
 * with the permissions above, and an `operator` user with every permission for the NATS CLI and tooling.
 * Passwords are written as given (keep the file private); listen address and store come from the command line.
 */
export function natsServerConfig(options: { readonly namespace?: string; readonly passwords: Readonly<Record<ServiceIdentity | "operator", string>> }): string {
  const users = (["gateway", "agent-runner", "policy", "tool-exec"] as const).map(
    (service) =>
      `    { user: ${quote(service)}, password: ${quote(options.passwords[service])}, permissions: ${permissionsBlock(natsPermissions(service, options.namespace))} }`,
  );
  users.push(`    { user: "operator", password: ${quote(options.passwords.operator)} }`);
  return [
    "# Generated by Steward (natsServerConfig): one NATS user per service, with subject permissions (docs/operations.md).",
    "authorization {",
    "  users = [",
    users.join(",\n"),
    "  ]",
    "}",
    "",
  ].join("\n");
}
