import type { Redis } from 'ioredis'

const SETTINGS = ['appendonly', 'appendfsync', 'save', 'maxmemory', 'maxmemory-policy'] as const
type Settings = Partial<Record<typeof SETTINGS[number], string>>

/** Redis restarted empty, or dropped keys to make room: what is gone is gone, and no token comes back to life. */
const FORGETS = 'every session ends (users sign in again), blocked e-mails get their free failures back, trusted devices ask for a code again and links in flight stop working'
/** Redis restarted from a state some writes old: what changed since is undone, endings included. */
const ROLLS_BACK = 'blocked e-mails get back the failures counted since, and sessions ended since (logouts, password changes) live again until they next refresh or expire'

/**
 * What Redis would forget or undo that the plugin's guarantees need (example/docs/production.md, "Redis persistence"):
 * blocks and session endings must survive a crash or restart, and keys must never be evicted to make room.
 */
export function persistenceWarnings (settings: Settings): string[] {
  const warnings: string[] = []
  const snapshots = (settings.save ?? '') !== ''
  if (settings.appendonly !== 'yes') {
    warnings.push(snapshots
      ? `Redis persists by RDB snapshots only (save "${settings.save}"): a crash goes back to the last one, so ${ROLLS_BACK}; set appendonly yes (appendfsync everysec)`
      : `Redis has no persistence (appendonly no, no save points): after a restart ${FORGETS}; set appendonly yes (appendfsync everysec)`)
  } else if (settings.appendfsync === 'no') {
    warnings.push(`Redis appendfsync is "no": a crash can lose about 30 s of writes, so ${ROLLS_BACK}; set appendfsync everysec`)
  }
  if ((settings.maxmemory ?? '0') !== '0' && settings['maxmemory-policy'] !== 'noeviction') {
    warnings.push(`Redis maxmemory-policy is "${settings['maxmemory-policy']}": when memory runs out Redis drops keys: ${FORGETS.replace('every session ends', 'sessions end')}; set maxmemory-policy noeviction`)
  }
  return warnings
}

/** Reads the settings with CONFIG GET (one at a time: Redis 6 takes one pattern); managed Redis may refuse. */
export async function checkRedisPersistence (client: Redis): Promise<string[]> {
  const settings: Settings = {}
  try {
    for (const name of SETTINGS) {
      const [, value] = await client.config('GET', name) as string[]
      if (value !== undefined) settings[name] = value
    }
  } catch (err) {
    return [`could not check Redis persistence (CONFIG GET failed: ${(err as Error).message}); the throttle and logouts need appendonly yes and maxmemory-policy noeviction (example/docs/production.md, "Redis persistence")`]
  }
  return persistenceWarnings(settings)
}
