/**
 * A number of places for range lookups in flight. A lookup that finds none either gives up at once (`tryTake`)
 * or waits for one, first come first served, until its deadline (`take`). A place is given back with `release`,
 * which hands it straight to the first lookup waiting.
 */
export class RangeLane {
  #free: number
  readonly #waiting = new Set<() => void>()

  constructor (places: number) {
    this.#free = places
  }

  tryTake (): boolean {
    if (this.#free === 0) return false
    this.#free--
    return true
  }

  /** True once a place is the caller's; false if none came free within `waitMs`. */
  async take (waitMs: number): Promise<boolean> {
    if (this.tryTake()) return true
    if (waitMs <= 0) return false
    return await new Promise<boolean>((resolve) => {
      const granted = (): void => { clearTimeout(timer); resolve(true) }
      const timer = setTimeout(() => { this.#waiting.delete(granted); resolve(false) }, waitMs)
      this.#waiting.add(granted)
    })
  }

  release (): void {
    // A Set iterates in insertion order: the first is the one waiting longest.
    const next = this.#waiting.values().next()
    if (next.done === true) {
      this.#free++
      return
    }
    this.#waiting.delete(next.value)
    next.value()
  }
}
