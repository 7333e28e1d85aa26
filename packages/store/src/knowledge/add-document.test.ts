import { createPool, type Pool } from "@steward/platform";
import { addDocument, KnowledgeFullError } from "./add-document";
import { freshDatabase } from "../../../../test/support/databases";

describe("a tenant's knowledge base holds at most its bound of documents (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const count = async (tenantId: string) =>
    (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = $1", [tenantId])).rows[0].n;

  beforeAll(async () => {
    db = await freshDatabase("steward_kb_bound");
    pool = createPool(db.url, { max: 8 });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  it("takes concurrent writers up to the bound and no further; the refusal writes nothing", async () => {
    const written = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => addDocument(pool, { tenantId: "acme", title: `Note ${i}`, body: `Text ${i}.` }, 5)),
    );
    expect(written.filter((w) => w.status === "fulfilled")).toHaveLength(5);
    const refused = written.filter((w): w is PromiseRejectedResult => w.status === "rejected").map((w) => w.reason);
    expect(refused).toHaveLength(3);
    for (const err of refused) expect(err).toBeInstanceOf(KnowledgeFullError);
    expect(refused[0]).toMatchObject({ status: 409, code: 10090, max: 5 });
    expect(await count("acme")).toBe(5);
    const chunks = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM kb_chunks WHERE tenant_id = 'acme'");
    expect(chunks.rows[0].n).toBe(5);
  });

  it("counts each tenant apart, and takes a document again once one is deleted", async () => {
    await expect(addDocument(pool, { tenantId: "globex", title: "Theirs", body: "Text." }, 5)).resolves.toEqual(expect.any(String));
    await expect(addDocument(pool, { tenantId: "acme", title: "Sixth", body: "Text." }, 5)).rejects.toBeInstanceOf(KnowledgeFullError);
    await pool.query("DELETE FROM kb_documents WHERE id = (SELECT id FROM kb_documents WHERE tenant_id = 'acme' LIMIT 1)");
    await expect(addDocument(pool, { tenantId: "acme", title: "Sixth", body: "Text." }, 5)).resolves.toEqual(expect.any(String));
    expect(await count("acme")).toBe(5);
  });
});
