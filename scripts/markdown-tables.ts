// api-documenter writes its tables as HTML inside the Markdown (a <table> with a paragraph per
// cell), which reads badly in a terminal and in any viewer without HTML. This turns each into a
// Markdown pipe table: one line per row, a cell's paragraphs joined by a space, its "|" escaped.

/** A cell's HTML (Markdown paragraphs inside) as one line of a pipe table. */
function cellText(html: string): string {
  return html
    .replaceAll("<!-- -->", "")
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, " ").trim())
    .filter((p) => p !== "")
    .join(" ")
    .replace(/(?<!\\)\|/g, "\\|");
}

/** The cells of each `<tr>` in `html`, header rows first as they come. */
function rowsOf(html: string): string[][] {
  return [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<t[hd]>([\s\S]*?)<\/t[hd]>/g)].map((cell) => cellText(cell[1]!)));
}

/** `markdown` with every HTML `<table>` written as a pipe table (the first row its header), and api-documenter's `<!-- -->` separators dropped. */
export function htmlTablesToMarkdown(markdown: string): string {
  return markdown
    .replace(/<table>([\s\S]*?)<\/table>/g, (_table, inner: string) => {
      const [head, ...body] = rowsOf(inner);
      if (head === undefined) return "";
      const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
      return [line(head), line(head.map(() => "---")), ...body.map(line)].join("\n");
    })
    .replaceAll("<!-- -->", "");
}
