/** Splits a document into chunks of whole paragraphs of at most `maxChars` (a longer paragraph is cut). */
export function chunkText(body: string, maxChars = 800): string[] {
  const paragraphs = body
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const chunks: string[] = [];
  let current = "";
  for (const paragraph of paragraphs) {
    for (let i = 0; i < paragraph.length; i += maxChars) {
      const piece = paragraph.slice(i, i + maxChars);
      if (current && current.length + 2 + piece.length > maxChars) {
        chunks.push(current);
        current = "";
      }
      current = current ? `${current}\n\n${piece}` : piece;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}
