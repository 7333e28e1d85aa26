import { status } from "@grpc/grpc-js";
import type { InvokeRequest, InvokeResponse } from "@steward/proto";
import { ToolArgumentsRefusedError } from "../../app/tool-exec";
import { toolExecPort } from "./tool-exec-port";

const grpcError = (code: number, details: string) => Object.assign(new Error(details), { code, details });
const refusing = (err: Error) => toolExecPort({ invoke: () => Promise.reject(err) });
const req = {} as InvokeRequest;

describe("the run loop's tool-exec over gRPC", () => {
  it("passes an answer through as it came", async () => {
    const answer = { resultCode: "ok", resultJson: "{}" } as InvokeResponse;
    await expect(toolExecPort({ invoke: async () => answer }).invoke(req)).resolves.toBe(answer);
  });

  it("turns INVALID_ARGUMENT into a refusal of the arguments, with tool-exec's detail", async () => {
    const refused = await refusing(grpcError(status.INVALID_ARGUMENT, "query: must be a string"))
      .invoke(req)
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ToolArgumentsRefusedError);
    expect((refused as Error).message).toBe("query: must be a string");
  });

  it("lets every other failure through unchanged: the run is retried", async () => {
    const away = grpcError(status.UNAVAILABLE, "No connection established");
    await expect(refusing(away).invoke(req)).rejects.toBe(away);
  });
});
