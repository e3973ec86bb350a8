// "Did you mean ...?" for misspelt names: the closest candidate by edit distance, if it is close enough.

/** The edit distance (insertions, deletions, substitutions, adjacent swaps) between `a` and `b`, or `max + 1` once it exceeds `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prevPrev: number[] = [];
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, prevPrev[j - 2] + 1);
      }
      row.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length];
}

/**
 * The candidate closest to `word` (case-insensitive edit distance at most a third of the word's
 * length, at least 1, at most 3), or undefined when nothing is close; ties go to the earlier candidate.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const max = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = editDistance(lower, candidate.toLowerCase(), max);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= max ? best : undefined;
}
