/* The table of shape models (models.def). */
#include <string.h>

#include "model.h"

static const fz_model *const MODELS[CZ_MODEL_COUNT] = {
#define FZ_MODEL(ID, id, kind) [CZ_MODEL_##ID] = &fz_model_##id,
#include "models.def"
#undef FZ_MODEL
};

static const char *const KINDS[CZ_MODEL_COUNT] = {
#define FZ_MODEL(ID, id, kind) [CZ_MODEL_##ID] = kind,
#include "models.def"
#undef FZ_MODEL
};

const fz_model *fz_model_of(cz_model_kind k) { return (unsigned)k < CZ_MODEL_COUNT ? MODELS[k] : NULL; }

const char *fz_model_name(cz_model_kind k) { return (unsigned)k < CZ_MODEL_COUNT ? KINDS[k] : "?"; }

cz_model_kind fz_model_find(const char *kind)
{
    for (int k = 0; kind && k < CZ_MODEL_COUNT; k++)
        if (!strcmp(kind, KINDS[k])) return (cz_model_kind)k;
    return CZ_MODEL_COUNT;
}

const char *fz_model_kinds(int *len)
{
    static const char list[] =
#define FZ_MODEL(ID, id, kind) kind ", "
#include "models.def"
#undef FZ_MODEL
        ;
    *len = (int)sizeof list - 3; /* without the last ", " */
    return list;
}
