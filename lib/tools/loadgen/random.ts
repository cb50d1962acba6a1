// A seeded source of randomness: the same seed replays the same rows in the same order, so a load
// run (and a training split) can be repeated exactly.

/** mulberry32: a small, well-mixed 32-bit PRNG; uniform in [0, 1). */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Fisher–Yates, in place: every order equally likely, one draw per element. Returns `list`. */
export const shuffle = <T>(list: T[], random: () => number): T[] => {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const swap = list[i] as T
    list[i] = list[j] as T
    list[j] = swap
  }
  return list
}
