// A label set as the exposition writes it between braces: `name="value"` pairs in the set's own
// order, joined by commas, each value escaped as prom-client 15.1.3 escapes it (`\`, newline, `"`).
// Series made once and kept (lib's cells, the drift bin slots) make their text here with their
// label set, so a scrape does no label work for them: building it per sample at each scrape was
// most of a render's garbage (23 MB of a 44 MB scrape at 500 models, Node 20, sampled heap
// profile) and a third of its CPU.

export type LabelValue = string | number | undefined
export type LabelSet = Readonly<Record<string, LabelValue>>

/** `\` and newlines escaped, as HELP text and label values need. */
export const escapeText = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')

/** What a label value escapes; one scan finds none in nearly every value, where three replaces each scanned it. */
const NEEDS_ESCAPE = /[\\\n"]/

export const escapeLabel = (value: LabelValue): LabelValue =>
  typeof value === 'string' && NEEDS_ESCAPE.test(value) ? escapeText(value).replace(/"/g, '\\"') : value

/** One `name="value"` pair. */
export const labelPair = (name: string, value: LabelValue): string => `${name}="${escapeLabel(value)}"`

/**
 * Every pair of `labels`, in its order; `''` for none. One flat string (join): `+=` left a tree of
 * partial strings per label set, kept for its life and walked at every scrape.
 */
export const labelText = (labels: LabelSet): string =>
  Object.keys(labels)
    .map((name) => labelPair(name, labels[name]))
    .join(',')

const afterPairs = new Map<string, string>()

/**
 * `text` and one more pair after it, for a label set that is another's and one label more. The
 * result refers to `text` and to one `,name="value"` string shared by every set that adds the same
 * pair (V8 keeps `a + b` as two parts, and joining it copies both): 32 bytes a set where a copy
 * took about 100 (a drift bin's labels), and the sets of a feature's bins share its text. Each
 * `pair` is kept for the process's life: for pairs of a small set (bin indices, sides).
 */
export const labelTextWith = (text: string, pair: string): string => {
  if (text === '') return pair
  let after = afterPairs.get(pair)
  if (after === undefined) afterPairs.set(pair, (after = `,${pair}`))
  return text + after
}
