import type { Test } from 'tap'
import type { AttemptStore, LegacyHashFormat } from '../../lib/index.js'
import { buildTestApp } from './app.js'

export const SLOW_MS = 300

/** A legacy format whose every verification takes SLOW_MS and fails: rows an attacker can address by e-mail. */
export const slowFormat: LegacyHashFormat = {
  name: 'slow-row',
  test: (hash) => hash.startsWith('slow$'),
  verify: async () => { await new Promise((resolve) => setTimeout(resolve, SLOW_MS)); return false }
}

/**
 * The slow-row attack (issue 18.1): 12 slow rows fill a one-slot hashing queue while bursts of 5 wrong
 * guesses at the victim arrive every 350 ms. Checks that at most 5 of the victim's guesses are verified.
 */
export async function slowRowAttack (t: Test, attempts?: AttemptStore): Promise<void> {
  let victimVerifications = 0
  const victimFormat: LegacyHashFormat = {
    name: 'victim-row',
    test: (hash) => hash.startsWith('victim$'),
    verify: async () => { victimVerifications++; return false }
  }
  // A short store timeout makes the lease short (about 3 × storeTimeout), so the attack runs in seconds.
  const { app, accounts } = await buildTestApp(t, {
    auth: { legacyHashes: [slowFormat, victimFormat], storeTimeout: 100, hashing: { threads: 1, maxQueue: 1000 }, ...attempts === undefined ? {} : { attempts } }
  })
  accounts.add({ email: 'victim@example.com', passwordHash: 'victim$x' })
  for (let i = 0; i < 12; i++) accounts.add({ email: `slow${i}@example.com`, passwordHash: `slow$${i}` })
  const login = async (email: string, password: string) => await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email, password } })

  const flood = Array.from({ length: 12 }, async (_, i) => await login(`slow${i}@example.com`, 'any'))
  const guesses: Array<Promise<{ statusCode: number }>> = []
  for (let burst = 0; burst < 10; burst++) {
    for (let i = 0; i < 5; i++) guesses.push(login('victim@example.com', `guess ${burst}-${i}`))
    await new Promise((resolve) => setTimeout(resolve, 350))
  }
  const answers = await Promise.all([...flood, ...guesses])
  t.ok(victimVerifications <= 5, `${victimVerifications} of the victim's guesses verified`)
  const statuses = answers.slice(12).map((answer) => answer.statusCode)
  t.ok(statuses.every((status) => [401, 429, 503].includes(status)), 'each guess got 401, 429 or 503')
  t.ok(statuses.includes(503), 'late guesses were shed')
  t.equal(statuses.filter((status) => status === 401).length, victimVerifications, 'every 401 was a verified, counted guess')
}
