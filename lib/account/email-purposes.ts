/** The one-time tokens of an e-mail change (contract §19): the link to the new address, and the revert link to the old one. */
export const EMAIL_CHANGE = 'email_change'
export const EMAIL_REVERT = 'email_revert'
/** A note per address the account left (by a change or a revert), living revertTtl: the deletion notice goes there too. */
export const EMAIL_LEFT = 'email_left'
