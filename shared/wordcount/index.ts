/** Word count, the in-app processor docs/write-a-processor.md walks through: `createWordcount()` needs nothing of the app. */
export { wordcountInfo, wordcountProcessor as createWordcount } from './processor';
