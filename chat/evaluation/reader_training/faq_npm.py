"""Questions people wrote, second source: the question headings of npm packages' READMEs (and of the
Markdown under their docs/), each with the prose under it as its answer (faq_markdown.py reads them).

npm has no working search here, so PACKAGES is a hand-written list of well-known packages (1,333)
with substantial READMEs: build tools, test frameworks, command-line and HTTP libraries, ORMs, linters,
date, logging, state and validation libraries. `npm pack` fetches each one's tarball into a cache
folder (var/faq-npm/<name>/, not committed); a package is read only when its package.json names a
permissive licence (PERMISSIVE; an SPDX "A OR B" needs one of them, "A AND B" both), and that licence
is recorded with each of its questions. The version read is the one npm served on the day of the
fetch (2026-12-07 for the committed data); the cache keeps it, so a rebuild reads the same files.

Left out, so that no evaluation set is trained on: HELD_OUT, the held-out sets' sources
(chat/evaluation/data/*/README.md and their licences/: pino and every pino-* package, Commander.js,
Postfix, bc, Expat, GNU time, libffi, Ninja, libtasn1, shared-mime-info) and Django (the
development set), by name and as the prefix of a name ("pino-pretty", "@pinojs/...").
"""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from chat.evaluation.reader_training.faq_markdown import parse_markdown_questions

CACHE = Path("var/faq-npm")
# A few fetches at once: `npm pack` waits on the network, and the machine's two cores are shared.
FETCHERS = 3
PERMISSIVE = {"MIT", "ISC", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "0BSD", "Unlicense", "CC0-1.0",
              "BlueOak-1.0.0"}
HELD_OUT = ("pino", "pinojs", "commander", "postfix", "bc", "expat", "time", "libffi", "ninja", "libtasn1",
            "shared-mime-info", "django")
PACKAGES = (
    "webpack", "webpack-cli", "webpack-dev-server", "rollup", "vite", "esbuild", "parcel", "@swc/core", "tsup",
    "turbo", "nx", "lerna", "gulp", "grunt", "browserify", "babel-loader", "@babel/core", "@babel/preset-env",
    "terser", "uglify-js", "postcss", "autoprefixer", "sass", "less", "stylus", "tailwindcss", "cssnano",
    "css-loader", "style-loader", "mini-css-extract-plugin", "html-webpack-plugin", "copy-webpack-plugin",
    "file-loader", "url-loader", "ts-loader", "ts-node", "tsx", "typescript", "nodemon", "pm2", "forever",
    "concurrently", "npm-run-all", "cross-env", "dotenv", "dotenv-expand", "rimraf", "mkdirp", "glob",
    "fast-glob", "globby", "chokidar", "fs-extra", "graceful-fs", "del", "cpy", "make-dir", "find-up", "pkg-up",
    "read-pkg", "tmp", "tempy",
    "jest", "mocha", "chai", "sinon", "ava", "tap", "tape", "vitest", "jasmine", "karma", "cypress",
    "playwright", "puppeteer", "supertest", "nock", "msw", "istanbul", "nyc", "c8", "testdouble", "proxyquire",
    "mock-fs", "should", "expect", "jsdom", "happy-dom", "@testing-library/react", "@testing-library/jest-dom",
    "enzyme", "storybook",
    "yargs", "minimist", "meow", "cac", "oclif", "inquirer", "prompts", "enquirer", "ora", "chalk", "kleur",
    "picocolors", "colors", "cli-table3", "boxen", "listr2", "cli-progress", "progress", "figlet",
    "update-notifier", "conf", "configstore", "cosmiconfig", "rc", "nconf", "convict", "execa", "shelljs", "zx",
    "cross-spawn", "open", "clipboardy", "which",
    "express", "koa", "@koa/router", "koa-router", "hapi", "@hapi/hapi", "fastify", "restify", "connect",
    "body-parser", "cookie-parser", "express-session", "cors", "helmet", "morgan", "compression", "multer",
    "busboy", "formidable", "serve-static", "http-proxy", "http-proxy-middleware", "http-server", "serve",
    "live-server", "browser-sync", "micro", "polka", "sails", "loopback", "feathers", "@feathersjs/feathers",
    "nestjs", "@nestjs/core", "next", "nuxt", "gatsby", "@remix-run/node", "astro", "socket.io", "ws",
    "engine.io", "ioredis", "redis", "bull", "bullmq", "agenda", "node-cron", "cron", "node-schedule",
    "passport", "passport-jwt", "passport-local", "jsonwebtoken", "bcrypt", "bcryptjs", "express-validator",
    "express-rate-limit", "csurf",
    "axios", "node-fetch", "got", "superagent", "request", "undici", "ky", "needle", "cross-fetch",
    "isomorphic-fetch", "form-data", "qs", "query-string", "url-parse", "whatwg-url", "follow-redirects",
    "http-errors", "statuses", "mime", "mime-types", "content-type", "cookie", "tough-cookie",
    "sequelize", "typeorm", "prisma", "@prisma/client", "mongoose", "mongodb", "knex", "objection", "bookshelf",
    "pg", "mysql", "mysql2", "sqlite3", "better-sqlite3", "redis-om", "lowdb", "nedb", "pouchdb", "level",
    "mikro-orm", "@mikro-orm/core", "kysely", "waterline", "dynamoose",
    "eslint", "prettier", "stylelint", "standard", "xo", "tslint", "jshint", "husky", "lint-staged",
    "commitizen", "@commitlint/cli", "semantic-release", "standard-version", "release-it", "np",
    "conventional-changelog-cli", "lerna-changelog", "changesets", "@changesets/cli", "eslint-plugin-react",
    "eslint-plugin-import", "eslint-config-airbnb", "typescript-eslint",
    "moment", "dayjs", "date-fns", "luxon", "moment-timezone", "chrono-node", "ms", "pretty-ms",
    "humanize-duration", "timeago.js",
    "winston", "bunyan", "debug", "loglevel", "log4js", "signale", "consola", "npmlog", "morgan-body", "roarr",
    "tracer",
    "redux", "@reduxjs/toolkit", "mobx", "zustand", "jotai", "recoil", "xstate", "immer", "immutable",
    "redux-saga", "redux-thunk", "reselect", "vuex", "pinia", "effector", "valtio", "rxjs",
    "react", "react-dom", "vue", "svelte", "preact", "angular", "@angular/core", "lit", "solid-js", "alpinejs",
    "htmx.org", "jquery", "backbone", "ember-source", "hyperapp", "mithril", "inferno",
    "lodash", "underscore", "ramda", "async", "bluebird", "p-limit", "p-queue", "p-map", "p-retry",
    "async-retry", "retry", "q", "co", "neo-async",
    "zod", "joi", "yup", "ajv", "superstruct", "io-ts", "class-validator", "validator", "json-schema", "valibot",
    "uuid", "nanoid", "shortid", "cuid", "hashids", "crypto-js", "bcrypt-nodejs", "node-forge", "tweetnacl",
    "jose",
    "marked", "markdown-it", "remark", "unified", "rehype", "showdown", "turndown", "highlight.js", "prismjs",
    "shiki", "cheerio", "htmlparser2", "parse5", "sanitize-html", "dompurify", "xss", "js-yaml", "yaml", "toml",
    "ini", "xml2js", "fast-xml-parser", "papaparse", "csv-parse", "csv-stringify", "json5", "jsonc-parser",
    "ajv-formats",
    "handlebars", "mustache", "ejs", "pug", "nunjucks", "liquidjs", "eta", "hogan.js", "dot",
    "sharp", "jimp", "canvas", "pdfkit", "pdf-lib", "pdfjs-dist", "exceljs", "xlsx", "docx", "archiver",
    "jszip", "adm-zip", "tar", "yauzl", "node-html-to-image", "qrcode",
    "i18next", "react-i18next", "vue-i18n", "intl-messageformat", "globalize",
    "graphql", "apollo-server", "@apollo/server", "graphql-yoga", "type-graphql", "graphql-tools",
    "@graphql-tools/schema", "relay-runtime", "urql", "@tanstack/react-query", "swr",
    "electron", "electron-builder", "electron-forge", "nw", "pkg", "nexe",
    "three", "d3", "chart.js", "echarts", "leaflet", "mapbox-gl", "pixi.js", "phaser", "konva", "fabric",
    "paper",
    "aws-sdk", "@aws-sdk/client-s3", "firebase", "firebase-admin", "stripe", "twilio", "nodemailer",
    "@sendgrid/mail", "googleapis", "@octokit/rest", "octokit", "probot",
    "sqlite", "localforage", "idb", "dexie",
    "semver", "compare-versions",
    "lru-cache", "node-cache", "keyv", "cache-manager", "quick-lru",
    "eventemitter3", "mitt", "emittery",
    "bignumber.js", "decimal.js", "big.js", "mathjs", "numeral", "accounting", "currency.js",
    "classnames", "clsx", "styled-components", "emotion", "@emotion/react", "framer-motion", "react-router",
    "react-router-dom", "react-hook-form", "formik", "react-select", "react-table", "@tanstack/react-table",
    "react-virtualized", "react-window", "react-dnd",
    "vue-router", "nuxt-i18n", "vuetify", "element-ui", "quasar", "bootstrap", "bulma", "foundation-sites",
    "materialize-css", "@mui/material", "antd", "semantic-ui-react",
    "workbox-webpack-plugin", "serviceworker-webpack-plugin",
    "browserslist", "caniuse-lite", "core-js", "regenerator-runtime", "whatwg-fetch",
    "source-map", "source-map-support", "stacktrace-js",
    "json-server", "mockjs", "faker", "@faker-js/faker", "chance", "casual",
    "pm2-logrotate",
    "verdaccio", "yalc", "patch-package", "npm-check-updates", "depcheck", "madge", "dependency-cruiser",
    "knip", "size-limit", "bundlesize", "webpack-bundle-analyzer",
    "typedoc", "jsdoc", "documentation", "esdoc", "docusaurus", "vuepress", "vitepress",
    "nodemailer-smtp-transport",
    "iconv-lite", "string-width", "strip-ansi", "ansi-styles", "wrap-ansi", "slugify", "pluralize",
    "change-case", "camelcase", "escape-string-regexp", "he", "entities",
    "bottleneck", "limiter", "rate-limiter-flexible",
    "node-pty", "ssh2", "ftp", "basic-ftp",
    "mqtt", "amqplib", "kafkajs", "nats", "zeromq",
    "jsonpath", "jsonpath-plus", "json-pointer", "fast-json-stringify", "deepmerge", "deep-equal",
    "fast-deep-equal", "object-hash", "flat", "dot-prop",
    "mongodb-memory-server", "testcontainers",
    "sinon-chai", "chai-as-promised", "mocha-junit-reporter",
    "husky-init", "simple-git", "isomorphic-git", "nodegit",
    "ffmpeg-static", "fluent-ffmpeg",
    "socket.io-client", "sockjs", "primus",
    "http-auth", "basic-auth", "oauth", "oidc-provider", "openid-client", "grant",
    "ioredis-mock", "redlock",
    "vm2", "isolated-vm",
    "workerpool", "piscina", "threads",
    "file-type", "electron-store", "electron-util", "electron-context-menu", "electron-dl", "electron-debug",
    "electron-serve", "electron-unhandled", "p-throttle", "p-debounce", "p-timeout", "p-event", "p-all",
    "p-any", "p-some", "p-waterfall", "p-series", "p-reduce", "p-filter", "p-times", "p-whilst", "p-lazy",
    "p-memoize", "p-wait-for", "p-settle", "p-props", "p-pipe", "p-tap", "p-cancelable", "mem", "memoize",
    "filenamify", "@sindresorhus/slugify", "is-online", "public-ip", "internal-ip", "default-gateway", "fkill",
    "ps-list", "pid-port", "get-port", "terminal-link", "terminal-image", "log-symbols", "cli-spinners",
    "cli-boxes", "cli-truncate", "cli-cursor", "ansi-escapes", "supports-color", "supports-hyperlinks",
    "indent-string", "strip-indent", "dedent", "pify", "normalize-url", "humanize-url", "is-url-superb",
    "is-absolute-url", "file-url", "move-file", "cp-file", "write-json-file", "load-json-file",
    "write-file-atomic", "path-exists", "path-type", "locate-path", "find-cache-dir", "env-paths", "os-name",
    "is-docker", "is-wsl", "is-ci", "ci-info", "is-elevated", "untildify", "tildify", "username", "image-size",
    "is-svg", "sort-keys", "map-obj", "camelcase-keys", "decamelize", "filter-obj", "type-fest", "ow",
    "@sindresorhus/is", "serialize-error", "clean-stack", "import-fresh", "resolve-from", "import-local",
    "read-package-up", "write-package", "get-stdin", "get-stream", "into-stream", "is-stream", "temp-dir",
    "crypto-random-string", "unique-string", "random-int", "array-shuffle", "yocto-queue", "nano-spawn",
    "tinyexec", "open-editor", "launch-editor", "chalk-template", "ink", "listr", "del-cli", "cpy-cli", "trash",
    "trash-cli", "npm-name", "package-json", "latest-version", "registry-url", "semver-regex", "parse-json",
    "strip-json-comments", "detect-indent", "detect-newline", "escape-goat", "html-tags", "on-change", "delay",
    "timeout-signal", "pretty-bytes", "filesize", "bytes", "parse-ms", "log-update", "ky-universal",
    "got-scraping", "hasha", "is-plain-obj", "is-regexp", "lodash-es", "just-diff",
    "awilix", "inversify", "tsyringe", "typedi",
    "mongoose-paginate-v2", "sequelize-cli", "typeorm-extension", "umzug", "db-migrate", "node-pg-migrate",
    "postgres", "pg-promise", "slonik", "mssql", "tedious", "oracledb", "cassandra-driver", "neo4j-driver",
    "elasticsearch", "@elastic/elasticsearch", "meilisearch", "algoliasearch", "typesense",
    "morgan-json", "express-winston", "winston-daily-rotate-file", "logform",
    "helmet-csp", "hpp", "express-slow-down", "express-async-handler", "express-async-errors",
    "http-terminator", "stoppable", "lightship", "terminus", "@godaddy/terminus",
    "joi-to-json", "zod-to-json-schema", "openapi-types", "swagger-ui-express", "swagger-jsdoc",
    "express-openapi-validator", "@apidevtools/swagger-parser", "json-schema-to-typescript", "quicktype",
    "vitest-mock-extended", "jest-extended", "jest-mock-extended", "ts-jest", "babel-jest",
    "jest-environment-jsdom", "@vitest/coverage-v8", "mocha-multi-reporters", "mochawesome",
    "allure-js-commons", "@cucumber/cucumber", "webdriverio", "nightwatch", "testcafe", "protractor", "detox",
    "appium",
    "vue-loader", "svelte-loader", "esbuild-loader", "swc-loader", "thread-loader", "cache-loader",
    "raw-loader", "source-map-loader", "eslint-webpack-plugin", "fork-ts-checker-webpack-plugin",
    "terser-webpack-plugin", "css-minimizer-webpack-plugin", "compression-webpack-plugin", "webpack-merge",
    "webpack-node-externals", "dotenv-webpack",
    "rollup-plugin-visualizer", "@rollup/plugin-node-resolve", "@rollup/plugin-commonjs",
    "@rollup/plugin-babel", "@rollup/plugin-typescript", "vite-plugin-pwa", "unplugin-auto-import",
    "unplugin-vue-components",
    "postcss-preset-env", "postcss-import", "postcss-nested", "postcss-cli", "purgecss", "windicss", "unocss",
    "twin.macro", "tailwind-merge", "daisyui",
    "eslint-plugin-vue", "eslint-plugin-jsx-a11y", "eslint-plugin-react-hooks", "eslint-plugin-unicorn",
    "eslint-plugin-jest", "eslint-plugin-prettier", "eslint-config-prettier", "eslint-plugin-node",
    "eslint-plugin-n", "eslint-plugin-promise", "eslint-plugin-security", "eslint-plugin-sonarjs",
    "@typescript-eslint/parser", "prettier-plugin-tailwindcss", "pretty-quick",
    "react-redux", "redux-persist", "redux-logger", "redux-observable", "mobx-react", "mobx-state-tree",
    "overmind", "nanostores", "@preact/signals",
    "react-query", "react-helmet", "react-helmet-async", "react-transition-group", "react-spring",
    "react-motion", "react-modal", "react-toastify", "react-hot-toast", "react-dropzone", "react-datepicker",
    "react-beautiful-dnd", "react-grid-layout", "react-markdown", "react-syntax-highlighter", "react-icons",
    "react-use", "usehooks-ts", "react-error-boundary", "react-intl", "react-native", "react-native-web", "expo",
    "vue-class-component", "vue-property-decorator", "vuedraggable", "vee-validate", "@vueuse/core",
    "svelte-preprocess", "@sveltejs/kit",
    "apexcharts", "recharts", "victory", "vis-network", "cytoscape", "sigma",
    "socket.io-redis", "@socket.io/redis-adapter", "uws", "sse-channel", "eventsource",
    "grpc", "@grpc/grpc-js", "protobufjs", "google-protobuf", "avsc", "msgpack5", "@msgpack/msgpack", "cbor",
    "bson",
    "node-rsa", "jsrsasign", "otplib", "speakeasy", "argon2", "scrypt-js",
    "date-fns-tz", "dayjs-plugin-utc", "rrule", "ical.js", "node-ical", "cron-parser", "later",
    "chokidar-cli", "onchange", "watchpack", "nodemon-webpack-plugin",
    "fuse.js", "lunr", "flexsearch", "minisearch", "elasticlunr", "natural", "compromise", "franc",
    "string-similarity", "fast-levenshtein", "leven", "diff", "jsdiff", "diff-match-patch",
    "ajv-cli", "json-schema-faker", "jsonschema", "z-schema", "tv4", "is-my-json-valid",
    "lodash.debounce", "lodash.merge", "lodash.get", "throttle-debounce", "debounce", "just-debounce-it",
    "mime-db", "file-saver", "downloadjs", "js-cookie", "universal-cookie", "store2", "store",
    "axios-retry", "axios-mock-adapter", "retry-axios", "got-fetch", "make-fetch-happen", "node-fetch-native",
    "ofetch", "wretch", "redaxios",
    "lit-html", "hybrids", "stencil", "@stencil/core",
    "marko", "riot", "aurelia-framework", "knockout",
    "hexo", "metalsmith", "eleventy", "@11ty/eleventy", "docsify", "gitbook-cli", "vuepress-theme-hope",
    "hugo-bin",
    "forever-monitor", "node-windows", "node-mac", "pm2-runtime", "supervisor", "naught",
    "graphql-request", "graphql-ws", "subscriptions-transport-ws", "dataloader", "graphql-shield", "nexus",
    "@pothos/core", "mercurius",
    "quill", "slate", "draft-js", "prosemirror-view", "@tiptap/core", "codemirror",
    "howler", "tone", "video.js", "hls.js", "plyr",
    "socket.io-mock", "mock-socket",
    "node-gyp", "prebuild", "prebuild-install", "node-addon-api", "nan", "bindings", "cmake-js",
    "yarn", "pnpm", "npm", "bun", "deno-bin", "volta",
    "@mui/system", "@mui/lab", "@mui/joy", "@mui/base", "@mui/icons-material", "@mui/styles",
    "@mui/x-data-grid", "@mui/x-date-pickers", "@mui/x-charts", "@mui/x-tree-view",
    "@fastify/cors", "@fastify/static", "@fastify/helmet", "@fastify/jwt", "@fastify/cookie",
    "@fastify/session", "@fastify/multipart", "@fastify/rate-limit", "@fastify/swagger", "@fastify/websocket",
    "@fastify/autoload", "@fastify/env", "@fastify/formbody", "@fastify/compress", "@fastify/http-proxy",
    "@fastify/postgres", "@fastify/redis", "@fastify/mongodb", "@fastify/view", "@fastify/sensible",
    "@fastify/under-pressure", "@fastify/auth", "@fastify/oauth2", "@fastify/caching", "@fastify/etag",
    "fastify-plugin", "avvio", "light-my-request", "find-my-way",
    "sails-mysql", "sails-postgresql", "sails-mongo", "sails-disk", "sails-hook-orm", "sails-hook-sockets",
    "waterline-utils", "machine",
    "remark-gfm", "remark-parse", "remark-stringify", "remark-rehype", "remark-frontmatter", "remark-math",
    "remark-lint", "remark-cli", "remark-toc", "rehype-stringify", "rehype-parse", "rehype-highlight",
    "rehype-sanitize", "rehype-raw", "rehype-slug", "rehype-autolink-headings", "mdast-util-to-markdown",
    "mdast-util-from-markdown", "hast-util-to-html", "micromark", "vfile", "unist-util-visit", "retext", "mdx",
    "@mdx-js/mdx",
    "escape-html", "strip-bom", "strip-final-newline", "npm-run-path", "path-key", "shebang-regex",
    "is-fullwidth-code-point", "emoji-regex", "string-length", "widest-line", "ansi-regex", "chalk-animation",
    "gradient-string", "cfonts", "cli-highlight", "cli-table", "table", "text-table", "columnify", "treeify",
    "archy",
    "yargs-parser", "arg", "sade", "mri", "citty", "clipanion", "gluegun", "vorpal", "caporal",
    "replace-in-file", "shx", "ncp", "copyfiles", "cpx2",
    "wouter", "navaid", "page", "universal-router", "history", "path-to-regexp", "url-pattern",
    "superjson", "devalue", "serialize-javascript", "flatted", "fast-safe-stringify", "safe-stable-stringify",
    "json-stringify-safe", "json-bigint", "lossless-json",
    "ioredis-lock", "node-redlock", "bee-queue", "kue", "graphile-worker", "pg-boss", "better-queue", "fastq",
    "async-mutex", "mutexify", "p-mutex", "semaphore-async-await",
    "envalid", "env-var", "dotenv-flow", "dotenv-safe", "dotenv-cli", "cross-env-shell", "config",
    "node-config", "conf-cli", "rc9", "c12",
    "sharp-cli", "svgo", "imagemin", "imagemin-pngquant", "squoosh", "potrace", "svg-sprite",
    "got-cjs", "phin", "centra", "bent", "minipass", "minizlib", "through2", "pump", "pumpify",
    "readable-stream", "highland", "split2", "ndjson", "event-stream", "duplexify", "stream-chain",
    "stream-json",
    "node-watch", "sane",
    "jsdom-global", "linkedom", "domino", "happy-dom-without-node", "cheerio-select", "css-select", "xpath",
    "xmldom", "@xmldom/xmldom", "sax", "saxes", "libxmljs2",
    "tsd", "expect-type", "dtslint", "tsc-alias", "tsconfig-paths", "module-alias", "ts-morph", "ts-essentials",
    "utility-types", "ts-toolbelt", "ts-pattern", "neverthrow", "fp-ts", "effect", "purify-ts", "true-myth",
    "vue-demi", "vue-tsc", "@vue/test-utils", "@testing-library/vue", "@testing-library/user-event",
    "@testing-library/dom", "@testing-library/svelte", "vitest-dom",
    "undici-types", "node-abort-controller", "abort-controller", "event-target-shim", "web-streams-polyfill",
    "formdata-node", "fetch-blob",
    "bcryptjs-react", "jwt-decode", "jwks-rsa", "express-jwt", "express-openid-connect", "next-auth",
    "@auth/core", "lucia", "iron-session", "cookie-session", "keygrip", "csrf", "csrf-csrf", "tiny-csrf",
    "i18n", "polyglot", "node-polyglot", "messageformat", "@formatjs/intl", "fluent", "@fluent/bundle",
    "typesafe-i18n", "rosetta",
    "sanitize-filename", "filenamify-url", "valid-filename", "is-valid-path", "unixify", "slash", "upath",
    "pathe", "normalize-path",
    "open-cli", "opn",
    "better-auth", "zod-validation-error", "zod-form-data", "@hookform/resolvers", "vest",
    "chartjs-node-canvas", "nivo", "@nivo/core", "billboard.js", "frappe-charts", "uplot", "lightweight-charts",
    "prom-client", "opentelemetry", "@opentelemetry/api", "@opentelemetry/sdk-node", "dd-trace", "newrelic",
    "@sentry/node", "@sentry/browser", "rollbar", "bugsnag", "elastic-apm-node", "hot-shots", "node-statsd",
    "cls-hooked", "async-local-storage", "continuation-local-storage",
    "node-html-parser", "html-to-text", "html-minifier", "html-minifier-terser", "clean-css", "csso",
    "lightningcss", "esbuild-wasm",
    "twig", "swig", "jade", "dustjs-linkedin", "squirrelly", "art-template",
    "zip-a-folder", "unzipper", "decompress", "tar-fs", "tar-stream", "archiver-utils", "extract-zip",
    "node-stream-zip",
    "better-sqlite3-helper", "sql.js", "alasql", "sql-template-strings", "sql-template-tag", "squel",
    "mongo-sql",
    "json-rules-engine", "node-rules", "rools",
    "chance-generators", "fast-check", "jsverify", "testcheck",
    "benchmark", "tinybench", "mitata", "kelonio",
)
# The Markdown a package's questions are read from: its README, and docs/ (a changelog's or a
# migration guide's questions are about versions, not about using the package).
_README = re.compile(r"package/readme(\.md|\.markdown)?", re.IGNORECASE)
_DOCS = re.compile(r"package/docs?/.+\.(md|markdown)", re.IGNORECASE)
_NOT_DOCS = re.compile(r"change|history|release|migrat|upgrad|contribut|code.of.conduct|security|licen[cs]e",
                       re.IGNORECASE)


def held_out(name: str) -> bool:
    """Whether npm package `name` is, or belongs to, a source of an evaluation set."""
    words = name.lower().lstrip("@").replace("/", "-")
    return any(words == held or words.startswith(held + "-") for held in HELD_OUT)


def licence(manifest: dict) -> str | None:
    """The package's licence if it is permissive (PERMISSIVE), else None."""
    declared = manifest.get("license") or manifest.get("licenses") or ""
    if isinstance(declared, dict):
        declared = declared.get("type", "")
    if isinstance(declared, list):  # the old "licenses": [{"type": "MIT"}, ...], any of them
        declared = " OR ".join(item.get("type", "") if isinstance(item, dict) else str(item) for item in declared)
    names = [word for word in re.findall(r"[\w.+-]+", str(declared)) if word not in ("OR", "AND", "WITH")]
    if not names:
        return None
    permitted = [name in PERMISSIVE for name in names]
    if " AND " in str(declared):
        return str(declared) if all(permitted) else None
    return str(declared) if any(permitted) else None


def fetch(names: tuple[str, ...] = PACKAGES, cache: Path = CACHE) -> dict[str, Path]:
    """Each package's tarball, `npm pack`ed into cache/<name>/ unless one is there already; a
    package npm cannot fetch is left out (said on the terminal)."""
    def one(name: str) -> tuple[str, Path | None]:
        folder = cache / name.replace("/", "__")
        if not list(folder.glob("*.tgz")):
            folder.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(["npm", "pack", name, "--silent", "--pack-destination", str(folder)],
                                  capture_output=True, text=True)
            if done.returncode:
                print(f"npm pack {name}: failed ({done.stderr.strip().splitlines()[-1:] or '?'})")
                return name, None
        return name, sorted(folder.glob("*.tgz"))[-1]

    with ThreadPoolExecutor(FETCHERS) as pool:
        return {name: path for name, path in pool.map(one, [n for n in names if not held_out(n)]) if path}


def markdown_files(tarball: Path) -> tuple[dict, list[tuple[str, str]]]:
    """The package's package.json, and its README and docs/ Markdown as (path in the package, text)."""
    manifest, files = {}, []
    with tarfile.open(tarball) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            if not member.isfile():
                continue
            if member.name == "package/package.json":
                manifest = json.loads(archive.extractfile(member).read())
            elif _README.fullmatch(member.name) or (_DOCS.fullmatch(member.name)
                                                     and not _NOT_DOCS.search(member.name.rsplit("/", 1)[-1])):
                text = archive.extractfile(member).read().decode("utf-8", "replace")
                files.append((member.name.removeprefix("package/"), text))
    return manifest, files


def extract(cache: Path = CACHE) -> tuple[list[dict], dict[str, int]]:
    """The question entries (faq.py's schema) of every package in PACKAGES with a permissive
    licence, fetched into `cache` when missing; and how many packages were fetched, kept (read),
    and left out for their licence. A question asked and answered alike by two packages (one README
    shipped by both "koa-router" and "@koa/router") is kept once."""
    tarballs = fetch(PACKAGES, cache)
    entries, seen = [], set()
    counts = {"fetched": len(tarballs), "kept": 0, "not permissive": 0}
    for name, tarball in tarballs.items():
        manifest, files = markdown_files(tarball)
        declared = licence(manifest)
        if declared is None or held_out(manifest.get("name", name)):
            counts["not permissive"] += declared is None
            continue
        counts["kept"] += 1
        for path, text in files:
            page = f"{name}/{path}"
            for entry in parse_markdown_questions(text, page):
                key = (entry["question"].lower(), entry["answer"][0])
                if key not in seen:
                    seen.add(key)
                    entries.append({"source": name, "licence": declared, "page": page, **entry})
    return entries, counts
