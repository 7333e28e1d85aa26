import { needsAdmin, proposalListRequest } from "./proposal-request";

describe("the proposals list request and who may decide a proposal", () => {
  it("defaults to the caller's own proposals, page 1 of 20, any status and thread", () => {
    expect(proposalListRequest({})).toEqual({ scope: "own", status: undefined, threadId: undefined, page: 1, pageSize: 20 });
  });

  it("keeps the scope, the filters and the page it was given", () => {
    const thread = "3d1b7c2a-5e8f-4a90-b1c2-7f6e5d4c3b2a";
    expect(proposalListRequest({ scope: "tenant", status: "pending", thread_id: thread, page: "3", page_size: "100" })).toEqual({
      scope: "tenant",
      status: "pending",
      threadId: thread,
      page: 3,
      pageSize: 100,
    });
  });

  it("needs the admin point only for a proposal made in another user's run", () => {
    expect(needsAdmin({ proposed_by: "ana" }, { userId: "ana" })).toBe(false);
    expect(needsAdmin({ proposed_by: "ana" }, { userId: "bob" })).toBe(true);
  });
});
