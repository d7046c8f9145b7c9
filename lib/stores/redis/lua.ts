import type { Cluster, Redis } from 'ioredis'

// Scripts read the Redis server's clock, not the caller's, so instances with skewed clocks agree.
/** Lua that sets `now` to the Redis server's time in milliseconds. */
export const LUA_NOW = 'local t = redis.call(\'TIME\') local now = t[1] * 1000 + math.floor(t[2] / 1000)'

/** Defines each one-key script on the client as `<namespace>_<name>`, once per client (every store on it shares them). */
export function defineOneKeyScripts (client: Redis | Cluster, namespace: string, scripts: Record<string, string>): void {
  for (const [name, lua] of Object.entries(scripts)) {
    const command = `${namespace}_${name}`
    if (typeof (client as unknown as Record<string, unknown>)[command] !== 'function') client.defineCommand(command, { numberOfKeys: 1, lua })
  }
}
