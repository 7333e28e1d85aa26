import * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { ServiceIdentity } from "../identities";
import { identityOf } from "./tls";

/**
 * Who may call what, by full method path (`/steward.v1.ToolExec/Invoke`) or by service (`/steward.v1.ToolExec/`,
 * every method of it). A method named nowhere is open to nobody.
 */
export type PeerRules = Readonly<Record<string, readonly ServiceIdentity[]>>;

function allowedFor(rules: PeerRules, path: string): readonly string[] {
  return rules[path] ?? rules[path.slice(0, path.lastIndexOf("/") + 1)] ?? [];
}

/**
 * A server interceptor that answers PERMISSION_DENIED, before any handler runs, to a call whose peer
 * certificate names a service the rules do not allow. On a server without TLS (development and test without
 * certificates; refused elsewhere at boot) there is no peer identity to check and every call passes. With TLS
 * the handshake has already refused a client without a certificate of Steward's CA.
 */
export function allowPeers(rules: PeerRules, logger?: Logger): grpc.ServerInterceptor {
  return (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        const auth = call.getAuthContext();
        if (auth.transportSecurityType !== "ssl") return next();
        const peer = identityOf(auth.sslPeerCertificate);
        if (peer !== undefined && allowedFor(rules, method.path).includes(peer)) return next();
        const details = `${method.path} is not open to ${peer ?? "a peer without a service identity"}`;
        logger?.warn({ method: method.path, peer: peer ?? null }, "refused a gRPC call from a service not allowed to make it");
        next({
          onReceiveMetadata: () => call.sendStatus({ code: grpc.status.PERMISSION_DENIED, details, metadata: new grpc.Metadata() }),
          onReceiveMessage: () => undefined,
          onReceiveHalfClose: () => undefined,
        });
      },
    });
}
