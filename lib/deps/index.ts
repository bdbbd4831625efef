/** Tool installs: catalog, version resolution, download, checksum, mirror, operator tools, cache layer. */
export * from './catalog.ts';
export * from './checksum.ts';
export * from './download.ts';
export * from './install.ts';
export * from './mirror.ts';
export * from './npm.ts';
export * from './operator.ts';
export * from './resolve.ts';
export * from './unpack.ts';
export * from './url.ts';
