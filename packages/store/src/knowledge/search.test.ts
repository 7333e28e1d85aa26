import { createPool, type Pool } from "@steward/platform";
import { addDocument } from "./add-document";
import { searchKnowledge } from "./search";
import { freshDatabase } from "../../../../test/support/databases";

describe("knowledge search ranking (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    db = await freshDatabase("steward_kb");
    pool = createPool(db.url, { max: 2 });
    const corpus: Array<[string, string]> = [
      ["Refunds", "Customers may ask for a refund within 30 days of purchase.\n\nRefunds go back to the original card within 5 business days."],
      ["Shipping", "Parcels ship within two working days. Express shipping arrives the next day."],
      ["Passwords", "Passwords must be at least 12 characters and are rotated every 90 days."],
      ["Holidays", "Employees get 25 days of paid holiday a year; unused days expire in March."],
      ["Expenses", "Hotel nights are reimbursed up to 180 EUR in capital cities and 120 EUR elsewhere."],
    ];
    for (const [title, body] of corpus) ids[title] = await addDocument(pool, { tenantId: "acme", title, body });
    ids.Other = await addDocument(pool, { tenantId: "globex", title: "Globex refunds", body: "Refund requests at Globex are handled within 90 days." });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  it.each([
    ["How long do I have to ask for a refund?", "Refunds"],
    ["when does express shipping arrive", "Shipping"],
    ["how often are passwords rotated", "Passwords"],
    ["hotel limit in capital cities", "Expenses"],
    ["paid holiday days per year", "Holidays"],
  ])("ranks the relevant document first for %p", async (question, title) => {
    const hits = await searchKnowledge(pool, "acme", question);
    expect(hits[0]).toMatchObject({ document_id: ids[title], title });
    expect(hits[0].score).toBeGreaterThan(0);
  });

  it("finds a passage despite a misspelling, through trigram similarity", async () => {
    const hits = await searchKnowledge(pool, "acme", "pasword rotaton");
    expect(hits[0]?.title).toBe("Passwords");
  });

  it("returns one hit per document with a snippet from the matching chunk", async () => {
    const hits = await searchKnowledge(pool, "acme", "refund card business days");
    expect(new Set(hits.map((h) => h.document_id)).size).toBe(hits.length);
    expect(hits[0].snippet).toMatch(/refund|card/i);
  });

  it("never returns another tenant's documents", async () => {
    const hits = await searchKnowledge(pool, "acme", "Globex refund requests");
    expect(hits.map((h) => h.document_id)).not.toContain(ids.Other);
    expect(await searchKnowledge(pool, "initech", "refund")).toEqual([]);
  });

  it("returns nothing for a query without words", async () => {
    expect(await searchKnowledge(pool, "acme", "?!  ...")).toEqual([]);
  });
});
