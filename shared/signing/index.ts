/** The app's signing key (TALLYHO_SIGNING_KEY, or one kept in storage) and what signs with it. */
export { containerKeyBlob, signerOf } from './keyStore';
