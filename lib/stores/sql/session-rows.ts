import type { RotationResult, SessionInfo, SessionTimes } from '../types.js'

/**
 * A session's row where the process keeps the time (MySQL, SQLite): snake_case columns, times in epoch ms, booleans
 * as 0/1. Numbers go through Number(): mysql2 can hand BIGINTs over as strings.
 */
export type SessionRow = Record<string, any>

export const sessionTimes = (row: SessionRow, now: number): SessionTimes => ({
  createdAt: Number(row.created_at),
  expiresInMs: Math.min(Number(row.idle_until), Number(row.ends_at)) - now,
  remainingMs: Number(row.ends_at) - now
})

/** The session as a rotation (or a retry within the grace period) hands it back. */
export function rotationResult (row: SessionRow, outcome: 'rotated' | 'grace', now: number): RotationResult {
  return {
    outcome,
    generation: Number(row.generation),
    keyId: row.key_id,
    accountId: row.account_id,
    credentialVersion: Number(row.credential_version),
    authenticatedAt: Number(row.authenticated_at),
    mfa: Number(row.mfa) === 1,
    trustedDevice: Number(row.trusted_device) === 1,
    ...sessionTimes(row, now),
    ...typeof row.amr === 'string' && row.amr !== '' ? { amr: row.amr.split(' ') } : {}
  }
}

/** A live session as the account's list shows it. */
export function sessionInfo (row: SessionRow): SessionInfo {
  return {
    id: row.id,
    accountId: row.account_id,
    createdAt: Number(row.created_at),
    lastUsedAt: Number(row.last_used_at),
    authenticatedAt: Number(row.authenticated_at),
    expiresAt: Math.min(Number(row.idle_until), Number(row.ends_at)),
    ip: row.ip,
    userAgent: row.user_agent,
    trustedDevice: Number(row.trusted_device) === 1
  }
}
