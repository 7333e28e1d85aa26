/** The page every list route serves when the query does not name one: page 1 of 20. */
export const DEFAULT_PAGE_SIZE = 20;

/** `page` and `page_size` of a list query (already in shape: the route's schema checked them), with their defaults. */
export function pageOf(query: { readonly page?: string; readonly page_size?: string }): { page: number; pageSize: number } {
  return { page: Number(query.page ?? 1), pageSize: Number(query.page_size ?? DEFAULT_PAGE_SIZE) };
}
