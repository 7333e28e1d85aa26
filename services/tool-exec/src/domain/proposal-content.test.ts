import { checkProposalContent, entropyBits } from "./proposal-content";

const check = (content: string) => checkProposalContent({ title: "A note", content });

describe("checkProposalContent", () => {
  it.each([
    "Refunds go back to the original card within 5 business days.",
    "Select the region from the drop-down list, then press Save.",
    "Passwords must be at least 12 characters; Password: must be rotated every 90 days.",
    "Runs, events and threads are kept for 30 days; the outbox of the mail server is emptied hourly.",
    "The document 3f0c2a8e-1b2d-4c5e-9f60-7a8b9c0d1e2f explains the shipping regions (see example.com/v1.2).",
    "Clear your browser cache if the page looks stale.",
    "Update the address in the profile, then set the default.",
  ])("lets prose through: %p", (content) => {
    expect(check(content)).toBeNull();
  });

  it.each([
    ["a JWT", "use eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEiLCJ0aWQiOiJhY21lIn0.c2lnbmF0dXJlLXBhcnQtaGVyZQ to call it"],
    ["an sk- key", "the key is sk-proj-AbCdEf0123456789XyZ"],
    ["an AWS key id", "AKIAIOSFODNN7EXAMPLE opens the bucket"],
    ["a bearer token", "send Authorization: Bearer abcdefABCDEF0123456789.xyz"],
    ["a private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"],
    ["a password pair", "log in with password=hunter2!"],
    ["a password after a colon", "db password: S3cretPass"],
    ["an api_key pair", "api_key: 9f8e7d6c5b4a"],
    ["credentials in a URL", "connect to postgres://admin:pa55@db.internal:5432/app"],
    ["a high-entropy string", "the value Zx8Qm2Lr7Tn4Vb9Kc1Wd6Yh3Jf5Gs0Pa is needed"],
  ])("finds a secret: %s", (_what, content) => {
    expect(check(content)).toEqual({ reason: "secret", field: "content" });
  });

  it.each([
    "SELECT name FROM customers",
    "run select * from orders to see them",
    "select id, total from orders",
    "select total from orders where id = 4",
    "INSERT INTO audit VALUES (1)",
    "delete from sessions",
    "update users set admin = true",
    "DROP TABLE users;",
    "create table t (id int)",
    "grant select on secrets to public_role",
    "1 union select password",
  ])("finds SQL: %p", (content) => {
    expect(check(content)?.reason).toBe("sql");
  });

  it.each(["refunds are in kb_documents", "look in tool_results for it", "it lives in public.refunds", "read it from billing.invoices"])(
    "finds a table name: %p",
    (content) => {
      expect(check(content)?.reason).toBe("table_name");
    },
  );

  it.each(["the answer is kept in session_cache", "keys look like cache:users:42", "the cache lives at redis://cache-1:6379"])(
    "finds a cache name: %p",
    (content) => {
      expect(check(content)?.reason).toBe("cache_name");
    },
  );

  it("checks every field and names the one it found, never the text", () => {
    const finding = checkProposalContent({ title: "ok", content: "fine", evidence_quote: "token=abcd1234EFGH" });
    expect(finding).toEqual({ reason: "secret", field: "evidence_quote" });
    expect(JSON.stringify(finding)).not.toContain("abcd1234EFGH");
    expect(checkProposalContent({ title: "DROP TABLE x", content: "fine", evidence_quote: undefined })).toEqual({ reason: "sql", field: "title" });
  });

  it("reports a secret before SQL when both are there", () => {
    expect(check("SELECT * FROM t WHERE key = 'sk-abcdefghijklmnop1234'")?.reason).toBe("secret");
  });

  it("measures entropy in bits per character", () => {
    expect(entropyBits("aaaa")).toBe(0);
    expect(entropyBits("abcd")).toBe(2);
  });
});
