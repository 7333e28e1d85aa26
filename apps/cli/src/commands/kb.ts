import { readFileSync } from "node:fs";
import { basename, extname } from "node:path";
import type { DocumentSummary, Page } from "@steward/contract";
import type { Command } from "../args";
import { print, table, type Context } from "../context";
import { UsageError } from "../errors";
import { ExitCode } from "../exit-codes";

type KbCommand = Extract<Command, { name: `kb.${string}` }>;

type DocumentPage = Page<DocumentSummary>;

/** Reads a local file for upload; a missing or unreadable file is a usage error naming it. */
export function readLocalFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** `steward kb add <file> [--title T] | ls | rm <id>`: the tenant's knowledge base. */
export async function kbCommand(ctx: Context, cmd: KbCommand): Promise<number> {
  switch (cmd.name) {
    case "kb.add": {
      const body = readLocalFile(cmd.file);
      const title = cmd.title ?? basename(cmd.file, extname(cmd.file));
      const format = /^\.(md|markdown)$/i.test(extname(cmd.file)) ? "markdown" : "text";
      const doc = await ctx.api.request<{ id: string; title: string }>("POST", "/v1/knowledge/documents", { body: { title, body, format } });
      print(ctx, doc, (d) => `added ${ctx.style.bold(d.id)}  ${d.title}`);
      return ExitCode.ok;
    }
    case "kb.ls": {
      const page = await ctx.api.request<DocumentPage>("GET", "/v1/knowledge/documents", { query: { page: cmd.page, page_size: cmd.pageSize } });
      print(ctx, page, (p) => {
        if (p.items.length === 0) return p.page === 1 ? "the knowledge base is empty" : `nothing on page ${p.page} (${p.total} in all)`;
        const rows = p.items.map((d) => [d.id, d.created_at, d.title]);
        return table([["ID", "ADDED", "TITLE"], ...rows]) + ctx.style.dim(`page ${p.page}, ${p.items.length} of ${p.total}`);
      });
      return ExitCode.ok;
    }
    case "kb.rm":
      await ctx.api.request("DELETE", `/v1/knowledge/documents/${cmd.id}`);
      print(ctx, { id: cmd.id, deleted: true }, (r) => `deleted ${r.id}`);
      return ExitCode.ok;
  }
}
