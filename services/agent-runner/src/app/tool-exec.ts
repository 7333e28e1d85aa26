import type { InvokeOptions, InvokeRequest, InvokeResponse } from "@steward/proto";

/**
 * tool-exec as the run loop calls it (adapters/grpc/tool-exec-port.ts over gRPC). A call whose arguments
 * tool-exec refuses rejects with ToolArgumentsRefusedError; any other rejection means tool-exec could not be
 * reached, and the run is retried on a later delivery.
 */
export interface ToolExec {
  invoke(req: InvokeRequest, options?: InvokeOptions): Promise<InvokeResponse>;
}

/** tool-exec refused the call's arguments (they fail the tool's schema): nothing ran, and the model may correct them. */
export class ToolArgumentsRefusedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ToolArgumentsRefusedError";
  }
}
