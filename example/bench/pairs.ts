import type { LoadResult } from './load.js'

/**
 * A ratio of two targets measured side by side, A B A B …: one ratio per pair, and their median with the
 * smallest and largest. On a machine where one run can swing 2×, the pairs share their swings; a ratio of
 * two medians taken apart would not.
 */
export interface PairedRatio {
  median: number
  min: number
  max: number
  ratios: number[]
}

export function pairedRatio (a: readonly number[], b: readonly number[]): PairedRatio {
  const ratios = a.slice(0, b.length).map((value, i) => value / b[i]!)
  const sorted = [...ratios].sort((x, y) => x - y)
  const middle = Math.floor(sorted.length / 2)
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
  return { median, min: sorted[0] ?? NaN, max: sorted.at(-1) ?? NaN, ratios }
}

/** Successful answers per second of each run. */
export const okRates = (runs: readonly LoadResult[]): number[] => runs.map((run) => run.okPerSecond)

/**
 * `1.05 × hand-written (0.98–1.12, 3 pairs)`. A median within 0.005 of `target` gets a third digit,
 * rounded down, so that a miss never reads as the target (0.9997 → 0.999, not 1.00).
 */
export function pairedText ({ median, min, max, ratios }: PairedRatio, baseline: string, target?: number): string {
  const shown = target !== undefined && Math.abs(median - target) < 0.005 ? (Math.floor(median * 1000) / 1000).toFixed(3) : median.toFixed(2)
  return `${shown} × ${baseline} (${min.toFixed(2)}–${max.toFixed(2)}, ${ratios.length} pairs)`
}
