import { readFile } from 'node:fs/promises'

/** A message as the example server appends it to AUTH_MAIL_OUTBOX. */
export interface OutboxMessage { type: string, to: string, token?: string, link?: string, expiresAt?: number, accountId?: string }

/** The messages in the outbox file so far (none while it does not exist). */
export async function outboxMessages (file: string): Promise<OutboxMessage[]> {
  const text = await readFile(file, 'utf8').catch(() => '')
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as OutboxMessage)
}

/** Waits (up to 5 s) for a message of `type`, to `to` if given; resolves it. */
export async function outboxMessage (file: string, type: string, to?: string): Promise<OutboxMessage> {
  for (let i = 0; i < 200; i++) {
    const found = (await outboxMessages(file)).find((message) => message.type === type && (to === undefined || message.to === to))
    if (found !== undefined) return found
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`no ${type} message${to === undefined ? '' : ` to ${to}`} in ${file}`)
}
