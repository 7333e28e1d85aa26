import * as grpc from "@grpc/grpc-js";
import { callStreamsOf } from "./call-stream";

/**
 * A gRPC server that refuses to share its port: grpc-js enables SO_REUSEPORT by default, which would let a
 * second copy of a service start on a busy port and silently split the traffic. `interceptors` run around
 * every call (who may call what: `allowPeers`).
 */
export function createGrpcServer(options: { interceptors?: grpc.ServerInterceptor[] } = {}): grpc.Server {
  return new grpc.Server({ "grpc.so_reuseport": 0, interceptors: options.interceptors ?? [] });
}

/**
 * Binds a gRPC server to `host:port` (port 0 picks a free one) and resolves with the bound port. Without
 * `credentials` (grpcServerCredentials), no TLS: development and test only.
 */
export function bindGrpc(server: grpc.Server, address: string, credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure()): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (err, port) => {
      if (err) reject(err);
      else resolve(port);
    });
  });
}

/**
 * Stops accepting calls, lets in-flight calls finish for up to `graceMs`, then forces the rest. A call stream
 * takes no new call and ends once the calls it has are answered.
 */
export function shutdownGrpc(server: grpc.Server, graceMs = 5000): Promise<void> {
  return new Promise((resolve) => {
    callStreamsOf(server).drain();
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A gRPC error with a status code; the only kind a handler should throw. */
export function grpcError(code: grpc.status, details: string): grpc.ServiceError {
  const err = new Error(details) as grpc.ServiceError;
  err.code = code;
  err.details = details;
  err.metadata = new grpc.Metadata();
  return err;
}

export { grpc };
