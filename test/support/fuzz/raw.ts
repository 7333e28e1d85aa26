import { connect } from "node:net";
import type { Rng } from "./prng";

/** HTTP/1.1 a fetch client cannot produce: bad methods and versions, bad framing, raw bytes, oversized heads. */
export function rawRequest(rng: Rng, method: string, target: string, authorization: string | undefined): { bytes: Buffer; mutation: string } {
  const auth = authorization === undefined ? "" : `Authorization: ${authorization}\r\n`;
  const head = (line: string, extra = "") => `${line}\r\nHost: localhost\r\n${auth}${extra}Connection: close\r\n\r\n`;
  const json = '{"input":"raw"}';
  const post = (framing: string, body: string) =>
    `POST /v1/agents/runs HTTP/1.1\r\nHost: localhost\r\n${auth}Content-Type: application/json\r\n${framing}Connection: close\r\n\r\n${body}`;
  const [mutation, text] = rng.pick<readonly [string, string | Buffer]>([
    ["unknown method", head(`FUZZ ${target} HTTP/1.1`)],
    ["lower-case method", head(`${method.toLowerCase()} ${target} HTTP/1.1`)],
    ["HTTP/1.0 without Host", `${method} ${target} HTTP/1.0\r\n${auth}\r\n`],
    ["HTTP/1.1 without Host", `${method} ${target} HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`],
    ["HTTP/1.2", head(`${method} ${target} HTTP/1.2`)],
    ["HTTP/3.0", head(`${method} ${target} HTTP/3.0`)],
    ["absolute form", head(`${method} http://localhost${target} HTTP/1.1`)],
    ["asterisk form", head("OPTIONS * HTTP/1.1")],
    ["bare LF", `${method} ${target} HTTP/1.1\nHost: localhost\n${auth.replace("\r\n", "\n")}Connection: close\n\n`],
    ["header without colon", head(`${method} ${target} HTTP/1.1`, "BadHeader\r\n")],
    ["space before colon", head(`${method} ${target} HTTP/1.1`, "X-Fuzz : 1\r\n")],
    ["obsolete line folding", head(`${method} ${target} HTTP/1.1`, "X-Fuzz: a\r\n b\r\n")],
    ["NUL in a header value", head(`${method} ${target} HTTP/1.1`, "X-Fuzz: a\u0000b\r\n")],
    ["raw bytes in the path", Buffer.concat([Buffer.from(`${method} /v1/agents/runs/`), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(head(" HTTP/1.1"))])],
    ["raw UTF-8 in the path", Buffer.from(head(`${method} /v1/agents/runs/é😀 HTTP/1.1`), "utf8")],
    ["20 KB URL", head(`${method} ${target}${target.includes("?") ? "&" : "?"}pad=${"p".repeat(20_000)} HTTP/1.1`)],
    ["20 KB header", head(`${method} ${target} HTTP/1.1`, `X-Fuzz: ${"h".repeat(20_000)}\r\n`)],
    ["Content-Length and Transfer-Encoding", post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n")],
    ["bad chunk size", post("Transfer-Encoding: chunked\r\n", "zz\r\nabc\r\n0\r\n\r\n")],
    ["two Content-Lengths", post(`Content-Length: ${json.length}\r\nContent-Length: 3\r\n`, json)],
    ["negative Content-Length", post("Content-Length: -1\r\n", json)],
    ["Content-Length far over the limit", post("Content-Length: 999999999\r\n", json)],
    ["chunked JSON", post("Transfer-Encoding: chunked\r\n", `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`)],
    ["GET with a body", head(`GET ${target} HTTP/1.1`, `Content-Type: application/json\r\nContent-Length: ${json.length}\r\n`) + json],
    ["Expect: 100-continue", post(`Expect: 100-continue\r\nContent-Length: ${json.length}\r\n`, json)],
    ["Expect: something else", post(`Expect: 42-fuzz\r\nContent-Length: ${json.length}\r\n`, json)],
    ["HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
    ["TLS client hello", Buffer.from("16030100a5010000a10303", "hex")],
  ]);
  return { bytes: typeof text === "string" ? Buffer.from(text, "latin1") : text, mutation };
}

/** What came back over a raw socket: the first response, or how the exchange ended without one. */
export interface RawAnswer {
  status: number | null;
  headers: Record<string, string>;
  body: Buffer;
  /** No complete answer within the bound. */
  hang: boolean;
  /** The connection ended (or failed) without a status line. */
  dropped?: string;
}

/** Sends bytes and reads the first response: to its Content-Length, its last chunk, or the end of the connection. */
export function sendRaw(host: string, port: number, bytes: Buffer, timeoutMs: number): Promise<RawAnswer> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let settled = false;
    const socket = connect({ host, port });
    const done = (answer: RawAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const parsed = (complete: boolean): RawAnswer | null => {
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) {
        const dropped = received.length ? "no status line" : "closed without an answer";
        return complete ? { status: null, headers: {}, body: received, hang: false, dropped } : null;
      }
      const [statusLine, ...lines] = received.subarray(0, end).toString("latin1").split("\r\n");
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).trim().toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      const body = received.subarray(end + 4);
      const dropped = status ? undefined : `status line ${JSON.stringify(statusLine.slice(0, 60))}`;
      const answer = { status: status ? Number(status[1]) : null, headers, body, hang: false, dropped };
      if (complete) return answer;
      const length = headers["content-length"];
      if (length !== undefined) return body.length >= Number(length) ? { ...answer, body: body.subarray(0, Number(length)) } : null;
      if (/chunked/i.test(headers["transfer-encoding"] ?? "")) return body.includes("0\r\n\r\n") ? answer : null;
      return null;
    };
    const timer = setTimeout(() => done({ status: null, headers: {}, body: received, hang: true }), timeoutMs);
    socket.on("connect", () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      // A 100 Continue is interim: the answer follows it.
      const interim = /^HTTP\/1\.[01] 100 [^\r]*\r\n\r\n/.exec(received.toString("latin1", 0, Math.min(received.length, 200)));
      if (interim) received = received.subarray(interim[0].length);
      const answer = parsed(false);
      if (answer) done(answer);
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      const answer = parsed(true)!;
      done(answer.status === null ? { ...answer, dropped: `${err.code ?? err.message}` } : answer);
    });
    socket.on("close", () => done(parsed(true)!));
  });
}
