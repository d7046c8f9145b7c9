import t from 'tap'
import { pairedRatio, pairedText } from '../../example/bench/pairs.js'

t.test('a paired ratio is the median of the rounds\' ratios, not a ratio of medians', async (t) => {
  const ratio = pairedRatio([100, 300, 200], [100, 100, 400])
  t.same(ratio.ratios, [1, 3, 0.5])
  t.equal(ratio.median, 1)
  t.equal(ratio.min, 0.5)
  t.equal(ratio.max, 3)
  t.equal(pairedText(ratio, 'by hand'), '1.00 × by hand (0.50–3.00, 3 pairs)')
})

t.test('a median next to its target gets a third digit, rounded down, so a miss never reads as the target', async (t) => {
  const near = (median: number): string => pairedText({ median, min: median, max: median, ratios: [median] }, 'x', 1)
  t.equal(near(0.9997), '0.999 × x (1.00–1.00, 1 pairs)')
  t.equal(near(1.0008), '1.000 × x (1.00–1.00, 1 pairs)')
  t.equal(near(0.9955), '0.995 × x (1.00–1.00, 1 pairs)')
  t.equal(near(0.97), '0.97 × x (0.97–0.97, 1 pairs)')
  t.equal(pairedText({ median: 0.8994, min: 0.86, max: 0.9, ratios: [0.86, 0.8994, 0.9] }, 'ceiling', 0.9), '0.899 × ceiling (0.86–0.90, 3 pairs)')
})
