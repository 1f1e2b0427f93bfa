#include <stdio.h>
#include "cli.h"
void cmd_plan_usage(FILE *f){(void)f;}
int cmd_plan(int c, char **v){(void)c;(void)v;return 2;}
