import type { Redis } from 'ioredis'

const SETTINGS = ['appendonly', 'appendfsync', 'save', 'maxmemory', 'maxmemory-policy'] as const
type Settings = Partial<Record<typeof SETTINGS[number], string>>

const LOSS = 'blocked e-mails can log in again and logged-out tokens work again until they expire'

/**
 * What Redis would forget that the plugin's guarantees need (README "Production"): blocks and
 * revocations must survive a crash or restart, and must never be evicted to make room.
 */
export function persistenceWarnings (settings: Settings): string[] {
  const warnings: string[] = []
  const snapshots = (settings.save ?? '') !== ''
  if (settings.appendonly !== 'yes') {
    warnings.push(snapshots
      ? `Redis persists by RDB snapshots only (save "${settings.save}"): a crash loses what changed since the last one, so ${LOSS}; set appendonly yes (appendfsync everysec)`
      : `Redis has no persistence (appendonly no, no save points): after a restart ${LOSS}; set appendonly yes (appendfsync everysec)`)
  } else if (settings.appendfsync === 'no') {
    warnings.push(`Redis appendfsync is "no": a crash can lose about 30 s of writes, so ${LOSS}; set appendfsync everysec`)
  }
  if ((settings.maxmemory ?? '0') !== '0' && settings['maxmemory-policy'] !== 'noeviction') {
    warnings.push(`Redis maxmemory-policy is "${settings['maxmemory-policy']}": when memory runs out Redis drops keys, and ${LOSS}; set maxmemory-policy noeviction`)
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
    return [`could not check Redis persistence (CONFIG GET failed: ${(err as Error).message}); the throttle and logouts need appendonly yes and maxmemory-policy noeviction (README "Production")`]
  }
  return persistenceWarnings(settings)
}
