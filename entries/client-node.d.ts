export { FileTaskIdStore, CorruptTaskIdStoreError } from '#client/node';
