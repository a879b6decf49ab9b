/**
 * `token` with its last `n` characters replaced — by `A`s, or by `B`s where it already ends in
 * `A`s — so the result always differs from the token, in characters whose bits are decoded (not
 * only a final character's padding bits). Replacing them with `A`s alone gives back the very
 * token now and then (one run in 4,096 for two characters): a "tampered" token then passed.
 */
export function tamperedEnd(token: string, n: number): string {
  const filler = token.endsWith("A".repeat(n)) ? "B" : "A";
  return `${token.slice(0, -n)}${filler.repeat(n)}`;
}
