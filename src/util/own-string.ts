/**
 * `text` as a string that keeps nothing else alive, for a string that is kept long (a cache key,
 * a store's value). In V8 a slice of 13 or more characters is a view into its parent, and a
 * concatenation holds its parts until it is flattened: kept as they are, a 25-character answer
 * sliced from a 20 KB journal read back by JSON.parse kept all 20 KB (measured), and a store's
 * shrunk record its whole response. Concatenating and slicing again makes V8 copy the characters into a
 * string of their own (the result is a view of that copy alone). Other engines copy or share
 * as they do; the text is the same either way.
 */
export function ownString(text: string): string {
  // Shorter slices and concatenations are already copies in V8.
  return text.length < 13 ? text : ` ${text}`.slice(1);
}
