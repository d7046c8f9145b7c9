import { script, type Script } from './client.js'

// Scripts read the Redis server's clock, not the caller's, so instances with skewed clocks agree.
/** Lua that sets `now` to the Redis server's time in milliseconds. */
export const LUA_NOW = 'local t = redis.call(\'TIME\') local now = t[1] * 1000 + math.floor(t[2] / 1000)'

/** Each Lua text with its SHA1, for EVALSHA. */
export function scripts<K extends string> (lua: Record<K, string>): Record<K, Script> {
  return Object.fromEntries(Object.entries<string>(lua).map(([name, text]) => [name, script(text)])) as Record<K, Script>
}
