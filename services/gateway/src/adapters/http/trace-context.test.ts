import type { FastifyRequest } from "fastify";
import { newTraceparent, traceparentOf } from "./trace-context";

const W3C = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;
const requestWith = (headers: Record<string, string> = {}) => ({ headers }) as unknown as FastifyRequest;

describe("trace context", () => {
  it("roots a new, well-formed context per request, never the same ids twice (across many refills of its randomness)", () => {
    const made = Array.from({ length: 2000 }, () => traceparentOf(requestWith()));
    expect(made.every((t) => W3C.test(t))).toBe(true);
    expect(new Set(made.map((t) => t.slice(3, 35))).size).toBe(made.length);
    expect(new Set(made.map((t) => t.slice(36, 52))).size).toBe(made.length);
    expect(W3C.test(newTraceparent())).toBe(true);
  });

  it("keeps a caller's valid traceparent, replaces an invalid one, and answers the same one however often it is asked", () => {
    const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(traceparentOf(requestWith({ traceparent: incoming }))).toBe(incoming);
    const request = requestWith({ traceparent: "not-a-traceparent" });
    const rooted = traceparentOf(request);
    expect(rooted).toMatch(W3C);
    expect(traceparentOf(request)).toBe(rooted);
  });
});
