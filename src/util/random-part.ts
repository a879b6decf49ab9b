/** Up to `n` of `items`, chosen at random (a partial Fisher–Yates shuffle); `items` is left as it is. */
export function randomPart<T>(items: readonly T[], n: number): T[] {
  const part = [...items];
  for (let i = 0; i < Math.min(n, part.length); i++) {
    const j = i + Math.floor(Math.random() * (part.length - i));
    [part[i], part[j]] = [part[j]!, part[i]!];
  }
  return part.slice(0, n);
}
