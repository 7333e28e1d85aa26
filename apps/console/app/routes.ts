import { renderRun } from "./pages/run";
import { renderDocument } from "./pages/document";
import { renderRuns } from "./pages/runs";
import { renderInbox } from "./pages/inbox";
import { renderPolicies } from "./pages/admin-policies";
import { renderDecisions } from "./pages/admin-decisions";
import { renderMcpSessions } from "./pages/admin-mcp-sessions";
import { renderKnowledge } from "./pages/admin-knowledge";
import { renderStatus } from "./pages/admin-status";
import { renderAdminRun } from "./pages/admin-run";
import { renderAdminRuns } from "./pages/admin-runs";
import { renderProposals } from "./pages/proposals";
import { renderThread } from "./pages/thread";
import { renderThreads } from "./pages/threads";

/** A page of the console: drawn into the main region, with what to undo when the page is left. */
export type Render = (main: HTMLElement, params: readonly string[]) => () => void;

export interface Page {
  /** Matched against the fragment (`#/…`); its groups are the page's parameters, URI-decoded. */
  readonly pattern: RegExp;
  readonly render: Render;
  /** Shown in the navigation with this label when given. */
  readonly nav?: string;
  /** The fragment the navigation links to. */
  readonly href?: string;
  /** Shown in the navigation only to a caller the admin routes answer (the gateway decides, not the page). */
  readonly admin?: boolean;
}

const openRun = (id: string) => (location.hash = `#/runs/${encodeURIComponent(id)}`);
const openThread = (id: string) => (location.hash = `#/threads/${encodeURIComponent(id)}`);

/** Every page, first match wins; the last one is the runs list, the console's home. */
export const PAGES: readonly Page[] = [
  { pattern: /^#\/runs\/([^/?#]+)$/, render: (main, [id]) => renderRun(main, id) },
  { pattern: /^#\/knowledge\/([^/?#]+)$/, render: (main, [id]) => renderDocument(main, id) },
  { pattern: /^#\/threads\/([^/?#]+)$/, render: (main, [id]) => renderThread(main, id, openRun, openThread) },
  { pattern: /^#\/threads$/, render: (main) => renderThreads(main, openThread), nav: "Threads", href: "#/threads" },
  { pattern: /^#\/proposals$/, render: (main) => renderProposals(main), nav: "Proposals", href: "#/proposals" },
  { pattern: /^#\/admin\/runs\/([^/?#]+)$/, render: (main, [id]) => renderAdminRun(main, id) },
  { pattern: /^#\/admin\/runs$/, render: (main) => renderAdminRuns(main), nav: "All runs", href: "#/admin/runs", admin: true },
  { pattern: /^#\/admin\/policies$/, render: (main) => renderPolicies(main), nav: "Policies", href: "#/admin/policies", admin: true },
  { pattern: /^#\/admin\/decisions$/, render: (main) => renderDecisions(main), nav: "Decisions", href: "#/admin/decisions", admin: true },
  { pattern: /^#\/admin\/decisions\/mcp-session\/([^/?#]+)$/, render: (main, [id]) => renderDecisions(main, { mcpSessionId: id }) },
  { pattern: /^#\/admin\/mcp-sessions$/, render: (main) => renderMcpSessions(main), nav: "MCP sessions", href: "#/admin/mcp-sessions", admin: true },
  { pattern: /^#\/admin\/knowledge$/, render: (main) => renderKnowledge(main), nav: "Knowledge", href: "#/admin/knowledge", admin: true },
  { pattern: /^#\/admin\/status$/, render: (main) => renderStatus(main), nav: "Status", href: "#/admin/status", admin: true },
  { pattern: /^#\/approvals$/, render: (main) => renderInbox(main), nav: "Approvals", href: "#/approvals" },
  { pattern: /^.*$/, render: (main) => renderRuns(main, openRun), nav: "Runs", href: "#/" },
];

/** The page for a fragment and its parameters. */
export function pageFor(hash: string): { page: Page; params: string[] } {
  for (const page of PAGES) {
    const match = page.pattern.exec(hash);
    if (match) return { page, params: match.slice(1).map((p) => decodeURIComponent(p)) };
  }
  throw new Error("the console has no home page");
}
