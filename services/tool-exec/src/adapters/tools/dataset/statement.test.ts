import { DatasetQueryError } from "./errors";
import { hasSeparator, singleStatement } from "./statement";

const refusal = (sql: string): string | undefined => {
  try {
    singleStatement(sql);
    return undefined;
  } catch (err) {
    return err instanceof DatasetQueryError ? err.code : "other";
  }
};

describe("one statement per call", () => {
  it("refuses the reported escape and other second statements before anything runs", () => {
    expect(refusal("select 1) a; commit; select pg_sleep(12); select * from (select 1")).toBe("QUERY_NOT_ALLOWED");
    expect(refusal("select 1; create temp table t as select 1")).toBe("QUERY_NOT_ALLOWED");
    expect(refusal("select 1 /* ; */ ; select 2")).toBe("QUERY_NOT_ALLOWED");
    expect(refusal("select 1 -- a comment\n; select 2")).toBe("QUERY_NOT_ALLOWED");
    expect(refusal("delete from orders")).toBe("QUERY_NOT_ALLOWED");
  });

  it("accepts one SELECT, with trailing semicolons and semicolons inside strings, names and comments", () => {
    expect(singleStatement("  select 1 ;; ")).toBe("select 1");
    expect(hasSeparator("select ';' as a, \"x;y\" as b, $$;$$ as c, $t$ ; $t$ as d -- ;\n/* ; /* ; */ */")).toBe(false);
    expect(hasSeparator("select 'it''s;' as a")).toBe(false);
    expect(hasSeparator("select E'\\';' as a")).toBe(false);
    expect(hasSeparator("select 'a' ; select 2")).toBe(true);
  });
});
