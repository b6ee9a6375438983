/* Print the options table (policy/options.h) as the markdown that README.md
 * holds between <!-- options:begin --> and <!-- options:end -->.
 * scripts/update-readme-options rewrites that section with this output, and
 * the unit.readme_options test checks that README.md matches it. With --tsv:
 * one line per option (variable, type, default, help; tab-separated), from
 * which the same script generates scripts/encore's flags. */
#include "policy/options.h"

#include <stdio.h>
#include <string.h>

static void duration(long long us, char *buf, size_t cap)
{
    if (us != 0 && us % 1000000 == 0)
        snprintf(buf, cap, "%llds", us / 1000000);
    else if (us != 0 && us % 1000 == 0)
        snprintf(buf, cap, "%lldms", us / 1000);
    else
        snprintf(buf, cap, "%lldus", us);
}

/* Markdown table cell text: '|' escaped. */
static void cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s);
    }
}

static const char *const type_names[] = {"bool", "integer", "duration", "text", "level"};

int main(int argc, char **argv)
{
    enc_options_parse(NULL, NULL); /* defaults only */
    if (argc > 1 && strcmp(argv[1], "--tsv") == 0) {
        for (int i = 0; i < enc_option_count; i++) {
            char def[ENC_OPT_STRLEN + 16];
            enc_option_format(i, def, sizeof def);
            printf("%s\t%s\t%s\t%s\n", enc_option_table[i].env, type_names[enc_option_table[i].type], def,
                   enc_option_table[i].help);
        }
        return 0;
    }
    puts("| Variable | Type | Default | Accepted values | What it does |");
    puts("|---|---|---|---|---|");
    for (int i = 0; i < enc_option_count; i++) {
        const enc_option_desc *d = &enc_option_table[i];
        char def[ENC_OPT_STRLEN + 16], lo[32], hi[32];
        enc_option_format(i, def, sizeof def);
        printf("| `%s` | ", d->env);
        switch (d->type) {
        case ENC_OPT_BOOL:
            printf("bool | `%s` | 1/0, on/off, true/false, yes/no | ", def);
            break;
        case ENC_OPT_INT:
            printf("integer | `%s` | %lld .. %lld | ", def, (long long)d->min, (long long)d->max);
            break;
        case ENC_OPT_DURATION:
            duration(d->min, lo, sizeof lo);
            duration(d->max, hi, sizeof hi);
            printf("duration | `%s` | %s .. %s; `500`, `500us`, `2ms`, `1s` (no unit: microseconds) | ", def, lo,
                   hi);
            break;
        case ENC_OPT_STRING:
            if (def[0]) {
                printf("text | `");
                cell(def);
                printf("` | up to %d bytes | ", ENC_OPT_STRLEN - 1);
            } else {
                printf("text | (empty) | up to %d bytes | ", ENC_OPT_STRLEN - 1);
            }
            break;
        case ENC_OPT_LEVEL:
            printf("level | `%s` | error, warn, info, debug, trace, or 0..4 | ", def);
            break;
        }
        cell(d->help);
        puts(" |");
    }
    return 0;
}
