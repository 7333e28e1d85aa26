import { status } from "@grpc/grpc-js";
import type { ToolExecApi } from "@steward/proto";
import { ToolArgumentsRefusedError, type ToolExec } from "../../app/tool-exec";

/** The run loop's ToolExec over a gRPC client: INVALID_ARGUMENT becomes ToolArgumentsRefusedError, with tool-exec's detail. */
export function toolExecPort(api: Pick<ToolExecApi, "invoke">): ToolExec {
  return {
    async invoke(req, options) {
      try {
        return await api.invoke(req, options);
      } catch (err) {
        const { code, details } = err as { code?: number; details?: string };
        if (code === status.INVALID_ARGUMENT) throw new ToolArgumentsRefusedError(details ?? "invalid arguments", { cause: err });
        throw err;
      }
    },
  };
}
