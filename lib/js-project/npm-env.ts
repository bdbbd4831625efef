/**
 * npm's settings for every install a build runs, a node app's and a site generator's alike: the
 * build machine's own ~/.npmrc never changes what gets installed (an empty user config in its
 * place), and no update notice, funding message or audit request. The project's own .npmrc still
 * applies: npm reads it from the folder it runs in.
 */
export function npmBuildEnv(userconfig: string): Record<string, string> {
  return {
    npm_config_userconfig: userconfig,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}
