import { appendFile } from 'node:fs/promises'
import type { PasswordAuthMessage } from '../lib/index.js'

export interface MailerConfig {
  /** AUTH_MAIL_OUTBOX: a file standing for the users' mailboxes, one JSON line per message, tokens and links in clear. */
  mailOutbox: string | undefined
  /** SMTP_URL: send through this SMTP server (e.g. smtp://user:pass@mail.example.com:587). */
  smtpUrl: string | undefined
  /** MAIL_FROM: the sender address. */
  mailFrom: string
  /** The address links point to (APP_URL, or where the server listens), never from a request's headers. */
  appUrl: () => string
}

/** The text of a message: links are built from the configured address; the token travels in the fragment. */
export function renderMessage (message: PasswordAuthMessage, appUrl: string): { subject: string, text: string } {
  switch (message.type) {
    case 'password_reset':
      return {
        subject: 'Reset your password',
        text: 'Someone asked to reset the password of this account. If it was you, open this link within ' +
          `${Math.round((message.expiresAt! - Date.now()) / 60_000)} minutes:\n\n${appUrl}/#token=${message.token!}\n\n` +
          'If it was not you, ignore this message: your password stays as it is.'
      }
    case 'password_changed':
      return { subject: 'Your password was changed', text: 'The password of this account was just changed, and every session ended. If it was not you, reset it now.' }
    case 'verify_email':
      return {
        subject: 'Confirm your address',
        text: `Someone registered an account with this address. If it was you, open this link to create it:\n\n${appUrl}/#verify=${message.token!}\n\n` +
          'If it was not you, ignore this message: no account is created.'
      }
    case 'account_exists':
      return {
        subject: 'You already have an account',
        text: `Someone tried to register this address again. If it was you, sign in at ${appUrl}/, or reset your password there if you forgot it.`
      }
    case 'mfa_enabled':
      return { subject: 'Two-step sign-in is on', text: 'Signing in to this account now needs a code from your authenticator app, and every other session ended. If it was not you, reset your password now.' }
    case 'mfa_disabled':
      return { subject: 'Two-step sign-in is off', text: 'Signing in to this account no longer needs a code, and every other session ended. If it was not you, reset your password now and turn it on again.' }
    case 'mfa_code_failed':
      return {
        subject: 'A sign-in code was wrong',
        text: 'Someone gave the right password of this account, then a wrong code from the authenticator app. If it was not you, ' +
          `your password is known: reset it at ${appUrl}/ (your code is still needed). We tell you this at most once a day.`
      }
    case 'passkey_added':
      return { subject: 'A passkey was added', text: `The passkey "${message.passkeyName ?? 'Passkey'}" can now sign in to this account. If it was not you, reset your password now: a reset removes every passkey.` }
    case 'email_change':
      return {
        subject: 'Confirm your new address',
        text: `Someone asked to move an account to this address. If it was you, open this link to confirm it:\n\n${appUrl}/#email-change=${message.token!}\n\n` +
          'If it was not you, ignore this message: nothing changes.'
      }
    case 'email_change_requested':
      return {
        subject: 'A change of address was asked for',
        text: `Someone signed in to this account asked to move it to ${message.newEmail ?? 'another address'}. Nothing changes until that address confirms. ` +
          `If it was not you, your password is known: change it at ${appUrl}/ now.`
      }
    case 'email_changed':
      return {
        subject: 'Your account has a new address',
        text: `This account moved to ${message.newEmail ?? 'another address'} and every other session ended. If it was not you, take it back with a new password ` +
          `within ${Math.round((message.expiresAt! - Date.now()) / 86_400_000)} days:\n\n${appUrl}/#email-revert=${message.token!}`
      }
    case 'account_deleted':
      return { subject: 'Your account was deleted', text: 'This account and everything held of it were deleted at its owner\'s request. If it was not you, contact us.' }
    case 'passkey_removed':
      // One passkey its owner removed (it has a name), or every passkey, removed by support.
      return message.passkeyName !== undefined
        ? { subject: 'A passkey was removed', text: `The passkey "${message.passkeyName}" can no longer sign in to this account. If it was not you, reset your password now.` }
        : { subject: 'Your passkeys were removed', text: 'Support removed the passkeys of this account and ended every session. Sign in with your password.' }
    case 'new_device_login':
      return {
        subject: 'A sign-in from a new device',
        text: `Someone signed in to this account on ${new Date(message.at!).toUTCString()} from ${message.ip!}, with ${message.device!}. ` +
          `If it was you, there is nothing to do. If not, reset your password at ${appUrl}/ and end your other sessions.`
      }
  }
}

/**
 * The example server's `deliver`: AUTH_MAIL_OUTBOX appends each message as a JSON line; SMTP_URL sends it
 * with nodemailer; without either, a development mailer prints it on standard output.
 */
export async function createMailer ({ mailOutbox, smtpUrl, mailFrom, appUrl }: MailerConfig): Promise<(message: PasswordAuthMessage) => Promise<void>> {
  if (mailOutbox !== undefined) {
    // Checked at start: a mistyped path would otherwise show only when the first message is lost.
    await appendFile(mailOutbox, '').catch((err: Error) => { throw new Error(`AUTH_MAIL_OUTBOX: cannot write to ${mailOutbox} (${err.message})`) })
    return async (message) => {
      // The link as the mailbox would show it, beside the message's fields (the token among them).
      const link = /https?:\/\/\S+#[\w-]+=\S+/.exec(renderMessage(message, appUrl()).text)?.[0]
      await appendFile(mailOutbox, `${JSON.stringify(link === undefined ? message : { ...message, link })}\n`)
    }
  }
  if (smtpUrl !== undefined) {
    // Loaded only when used: a server that sends no mail does not carry nodemailer in its memory.
    const { default: nodemailer } = await import('nodemailer')
    const transport = nodemailer.createTransport(smtpUrl)
    return async (message) => { await transport.sendMail({ from: mailFrom, to: message.to, ...renderMessage(message, appUrl()) }) }
  }
  return async (message) => {
    const { subject, text } = renderMessage(message, appUrl())
    console.log(`----- development mailer (set SMTP_URL to send for real) -----\nTo: ${message.to}\nSubject: ${subject}\n\n${text}\n-----`)
  }
}
