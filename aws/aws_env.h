/*
 * aws_env.h - how aws/ reads the environment: through an injected getenv,
 * so that tests resolve configuration from a table and the library reads
 * no variable behind its caller's back. A header of its own because both
 * the configuration (aws_config.h) and the credential sources
 * (cred_source.h), which the configuration calls, take it.
 */
#ifndef EL_AWS_ENV_H
#define EL_AWS_ENV_H

/* Looks up an environment variable; getenv in production, a table in tests.
 * HOME (for ~/.aws/...) is read through it too. */
typedef const char *(*el_getenv_fn)(const char *name);

#endif /* EL_AWS_ENV_H */
