import type { ThreadEvent } from "./thread-events";
import { foldThread, threadSnapshotOf } from "./thread-fold";

const created: ThreadEvent = { type: "thread.created", data: { title: "Refunds", created_by: "ana", created_at: "2026-12-01T10:00:00.000001Z" } };
const added = (runId: string, at: string): ThreadEvent => ({ type: "thread.run_added", data: { run_id: runId, added_at: at } });

describe("the thread fold", () => {
  it("given a created thread, when runs are added, then it counts them and names the last one", () => {
    const state = foldThread([created, added("r1", "2026-12-01T10:01:00.000000Z"), added("r2", "2026-12-01T10:02:00.000000Z")]);
    expect(threadSnapshotOf("t1", state)).toEqual({
      id: "t1",
      title: "Refunds",
      created_at: "2026-12-01T10:00:00.000001Z",
      updated_at: "2026-12-01T10:02:00.000000Z",
      archived_at: null,
      run_count: 2,
      last_run_id: "r2",
      forked_from: null,
    });
    expect([state.status, state.version]).toEqual(["open", 3]);
  });

  it("given a thread, when it is archived, then it is archived at that moment and keeps its runs", () => {
    const state = foldThread([
      created,
      added("r1", "2026-12-01T10:01:00.000000Z"),
      { type: "thread.archived", data: { archived_by: "ana", archived_at: "2026-12-01T11:00:00.000000Z" } },
    ]);
    expect(state).toMatchObject({ status: "archived", archived_at: "2026-12-01T11:00:00.000000Z", updated_at: "2026-12-01T11:00:00.000000Z", run_count: 1 });
  });

  it("given a fork's creation, then it names its origin and inherited runs, and counts only the runs added to it", () => {
    const forked: ThreadEvent = { type: "thread.forked", data: { forked_from: { thread_id: "t0", run_id: "r2" }, inherited_run_ids: ["r1", "r2"] } };
    const state = foldThread([created, forked, added("r3", "2026-12-01T10:03:00.000000Z")]);
    expect(state).toMatchObject({
      forked_from: { thread_id: "t0", run_id: "r2" },
      inherited_run_ids: ["r1", "r2"],
      run_count: 1,
      last_run_id: "r3",
      version: 3,
    });
    expect(threadSnapshotOf("t1", state).forked_from).toEqual({ thread_id: "t0", run_id: "r2" });
    expect(threadSnapshotOf("t1", foldThread([created, forked])).updated_at).toBe(created.data.created_at);
  });

  it("refuses a fork event anywhere but right after creation, or one that does not end at its run", () => {
    const forked: ThreadEvent = { type: "thread.forked", data: { forked_from: { thread_id: "t0", run_id: "r1" }, inherited_run_ids: ["r1"] } };
    expect(() => foldThread([forked])).toThrow(RangeError);
    expect(() => foldThread([created, added("r9", "2026-12-01T10:01:00.000000Z"), forked])).toThrow(/must follow thread.created/);
    expect(() => foldThread([created, forked, forked])).toThrow(RangeError);
    const broken: ThreadEvent = { type: "thread.forked", data: { forked_from: { thread_id: "t0", run_id: "r2" }, inherited_run_ids: ["r1"] } };
    expect(() => foldThread([created, broken])).toThrow(/up to its forked_from.run_id/);
  });

  it("refuses an event it does not know and a snapshot of no thread", () => {
    expect(() => foldThread([{ type: "thread.renamed", data: {} } as unknown as ThreadEvent])).toThrow(/unknown thread event/);
    expect(() => threadSnapshotOf("t1", foldThread([]))).toThrow(RangeError);
  });
});
