/*
 * Data items and datasets (acl/acl_tdt.h): what channels carry. An item
 * describes a tensor (type, shape, data type) and points at the caller's
 * bytes; a dataset is an ordered list of items. Items a dataset received
 * (acltdtReceiveTensor) own their bytes and belong to the dataset: destroying
 * the dataset destroys them. Plain host objects, as in CANN: they need no
 * runtime and are not thread-safe (one thread uses a dataset at a time).
 *
 * The wire form of a dataset (one channel message): per item, a header
 * (struct wire) then its dims then its bytes.
 */
#include "tdt.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 128u   /* CANN's limit on dimNum */

struct acltdtDataItem {
    acltdtTensorType type;
    aclDataType dtype;
    size_t ndims;
    int64_t *dims;
    void *data;
    size_t size;
    size_t slice_num, slice_id;
    acltdtDataset *owner;   /* a received item: it owns data and belongs to owner */
};

enum mem_kind { MEM_UNKNOWN, MEM_HOST, MEM_DEVICE };

struct acltdtDataset {
    acltdtDataItem **items;
    size_t n, cap;
    bool received;          /* filled by acltdtReceiveTensor: no item may be added */
    uint8_t mem;            /* enum mem_kind of the items' data, as CANN checks it */
};

static const char *type_name(int t)
{
    switch (t) {
    case ACL_TENSOR_DATA_TENSOR: return "ACL_TENSOR_DATA_TENSOR";
    case ACL_TENSOR_DATA_END_OF_SEQUENCE: return "ACL_TENSOR_DATA_END_OF_SEQUENCE";
    case ACL_TENSOR_DATA_ABNORMAL: return "ACL_TENSOR_DATA_ABNORMAL";
    case ACL_TENSOR_DATA_SLICE_TENSOR: return "ACL_TENSOR_DATA_SLICE_TENSOR";
    case ACL_TENSOR_DATA_END_TENSOR: return "ACL_TENSOR_DATA_END_TENSOR";
    default: return "an unknown type";
    }
}

static aclError check_dims(const char *api, const int64_t *dims, size_t dimNum)
{
    if (!dims && dimNum)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "dims is NULL but dimNum is %zu: if dims is NULL, dimNum must be 0",
                            dimNum);
    if (dims && !dimNum)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "dimNum is 0 but dims is not NULL: it must then be greater than 0");
    return ACL_SUCCESS;
}

static acltdtDataItem *item_new(acltdtTensorType type, const void *dims, size_t ndims,
                                aclDataType dtype, void *data, size_t size)
{
    acltdtDataItem *it = aclsim__calloc(1, sizeof *it);
    if (!it)
        return NULL;
    if (ndims) {
        it->dims = aclsim__malloc(ndims * sizeof(int64_t));
        if (!it->dims) {
            free(it);
            return NULL;
        }
        memcpy(it->dims, dims, ndims * sizeof(int64_t));
    }
    it->type = type;
    it->ndims = ndims;
    it->dtype = dtype;
    it->data = data;
    it->size = size;
    return it;
}

static void item_free(acltdtDataItem *it)
{
    if (it->owner)
        free(it->data);
    free(it->dims);
    free(it);
}

acltdtDataItem *acltdtCreateDataItem(acltdtTensorType tdtType, const int64_t *dims, size_t dimNum,
                                     aclDataType dataType, void *data, size_t size)
{
    static const char api[] = "acltdtCreateDataItem";
    if (check_dims(api, dims, dimNum))
        return NULL;
    if (dimNum > MAX_DIMS) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dimNum %zu is more than %u", dimNum, MAX_DIMS);
        return NULL;
    }
    acltdtDataItem *it;
    if (tdtType != ACL_TENSOR_DATA_TENSOR) {
        /* As CANN: a control item carries no shape, type or data. */
        if (dims) {
            aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                         "dims must be NULL for an item of type %s (%d)", type_name(tdtType),
                         (int)tdtType);
            return NULL;
        }
        it = item_new(tdtType, NULL, 0, ACL_DT_UNDEFINED, NULL, 0);
    } else {
        it = item_new(tdtType, dims, dimNum, dataType, data, size);
    }
    if (!it)
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    return it;
}

aclError acltdtDestroyDataItem(acltdtDataItem *dataItem)
{
    static const char api[] = "acltdtDestroyDataItem";
    if (!dataItem)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataItem is NULL");
    if (dataItem->owner)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "dataItem belongs to the dataset that received it: destroy the "
                            "dataset instead");
    item_free(dataItem);
    return ACL_SUCCESS;
}

#define ITEM_GETTER(ret, name, fail_value, expr)                                         \
    ret name(const acltdtDataItem *dataItem)                                             \
    {                                                                                    \
        if (!dataItem) {                                                                 \
            aclsim__fail(ACL_ERROR_INVALID_PARAM, #name, "dataItem is NULL");            \
            return fail_value;                                                           \
        }                                                                                \
        return expr;                                                                     \
    }
ITEM_GETTER(acltdtTensorType, acltdtGetTensorTypeFromItem, ACL_TENSOR_DATA_UNDEFINED, dataItem->type)
ITEM_GETTER(aclDataType, acltdtGetDataTypeFromItem, ACL_DT_UNDEFINED, dataItem->dtype)
ITEM_GETTER(void *, acltdtGetDataAddrFromItem, NULL, dataItem->data)
ITEM_GETTER(size_t, acltdtGetDataSizeFromItem, 0, dataItem->size)
ITEM_GETTER(size_t, acltdtGetDimNumFromItem, 0, dataItem->ndims)

aclError acltdtGetSliceInfoFromItem(const acltdtDataItem *dataItem, size_t *sliceNum, size_t *sliceId)
{
    static const char api[] = "acltdtGetSliceInfoFromItem";
    if (!dataItem)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataItem is NULL");
    if (!sliceNum)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "sliceNum is NULL");
    if (!sliceId)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "sliceId is NULL");
    *sliceNum = dataItem->slice_num;
    *sliceId = dataItem->slice_id;
    return ACL_SUCCESS;
}

aclError acltdtGetDimsFromItem(const acltdtDataItem *dataItem, int64_t *dims, size_t dimNum)
{
    static const char api[] = "acltdtGetDimsFromItem";
    if (!dataItem)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataItem is NULL");
    aclError err = check_dims(api, dims, dimNum);
    if (err)
        return err;
    if (dimNum < dataItem->ndims)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "dimNum %zu cannot be less than the item's %zu dims", dimNum,
                            dataItem->ndims);
    if (dataItem->ndims)
        memcpy(dims, dataItem->dims, dataItem->ndims * sizeof *dims);
    return ACL_SUCCESS;
}

acltdtDataset *acltdtCreateDataset(void)
{
    acltdtDataset *ds = aclsim__calloc(1, sizeof *ds);
    if (!ds)
        aclsim__fail(ACL_ERROR_BAD_ALLOC, "acltdtCreateDataset", "out of memory");
    return ds;
}

static void dataset_clear(acltdtDataset *ds)
{
    /* A received dataset holds only its own items; the items of any other
     * are the program's (and may be destroyed already: not touched). */
    for (size_t i = 0; ds->received && i < ds->n; i++)
        item_free(ds->items[i]);
    ds->n = 0;
    ds->received = false;
    ds->mem = MEM_UNKNOWN;
}

aclError acltdtDestroyDataset(acltdtDataset *dataset)
{
    if (!dataset)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "acltdtDestroyDataset", "dataset is NULL");
    dataset_clear(dataset);
    free(dataset->items);
    free(dataset);
    return ACL_SUCCESS;
}

acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index)
{
    static const char api[] = "acltdtGetDataItem";
    if (!dataset) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataset is NULL");
        return NULL;
    }
    if (index >= dataset->n) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                     "index %zu is greater than or equal to the dataset's size %zu", index,
                     dataset->n);
        return NULL;
    }
    return dataset->items[index];
}

static bool push_item(acltdtDataset *ds, acltdtDataItem *it)
{
    if (ds->n == ds->cap) {
        size_t cap = ds->cap ? ds->cap * 2 : 4;
        acltdtDataItem **items = aclsim__realloc(ds->items, cap * sizeof *items);
        if (!items)
            return false;
        ds->items = items;
        ds->cap = cap;
    }
    ds->items[ds->n++] = it;
    return true;
}

aclError acltdtAddDataItem(acltdtDataset *dataset, acltdtDataItem *dataItem)
{
    static const char api[] = "acltdtAddDataItem";
    if (!dataset)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataset is NULL");
    if (!dataItem)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataItem is NULL");
    if (dataset->received)
        return aclsim__fail(ACL_ERROR_FEATURE_UNSUPPORTED, api,
                            "the dataset holds received items: no item can be added to it");
    uint8_t mem = MEM_UNKNOWN;
    if (dataItem->data) {
        int kind = aclsim__initialized() ? aclsim__classify(dataItem->data).kind : ACLSIM_HOST;
        mem = kind == ACLSIM_DEVICE || kind == ACLSIM_VIRTUAL ? MEM_DEVICE : MEM_HOST;
    }
    if (mem != MEM_UNKNOWN && dataset->mem != MEM_UNKNOWN && mem != dataset->mem)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "the dataset's items are in %s memory and this one is not: the "
                            "memory of a dataset's items must be all host or all device memory",
                            dataset->mem == MEM_HOST ? "host" : "device");
    if (!push_item(dataset, dataItem))
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (dataset->mem == MEM_UNKNOWN)
        dataset->mem = mem;
    return ACL_SUCCESS;
}

size_t acltdtGetDatasetSize(const acltdtDataset *dataset)
{
    if (!dataset) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, "acltdtGetDatasetSize", "dataset is NULL");
        return 0;
    }
    return dataset->n;
}

const char *acltdtGetDatasetName(const acltdtDataset *dataset)
{
    if (!dataset) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, "acltdtGetDatasetName", "dataset is NULL");
        return NULL;
    }
    return "";   /* CANN's datasets are unnamed unless its device side names them */
}

/* ---- wire form ------------------------------------------------------------------ */

struct wire {
    int32_t type, dtype;
    uint64_t ndims, size;
};

aclError aclsim__tdt_pack(const acltdtDataset *ds, struct aclsim__tdt_msg **out, const char *api)
{
    size_t total = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const acltdtDataItem *it = ds->items[i];
        if (it->type != ACL_TENSOR_DATA_TENSOR && it->type != ACL_TENSOR_DATA_END_OF_SEQUENCE &&
            it->type != ACL_TENSOR_DATA_ABNORMAL)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "item %zu has type %s (%d): only ACL_TENSOR_DATA_TENSOR, "
                                "_END_OF_SEQUENCE or _ABNORMAL items can be sent", i,
                                type_name(it->type), (int)it->type);
        if (!it->data && it->size)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "item %zu has size %zu but no data (NULL)", i, it->size);
        total += sizeof(struct wire) + it->ndims * sizeof(int64_t) + it->size;
    }
    struct aclsim__tdt_msg *m = aclsim__tdt_msg_new(total);
    if (!m)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory (%zu bytes)", total);
    unsigned char *p = m->data;
    aclError err = ACL_SUCCESS;
    for (size_t i = 0; i < ds->n; i++) {
        const acltdtDataItem *it = ds->items[i];
        struct wire w = {it->type, it->dtype, it->ndims, it->size};
        memcpy(p, &w, sizeof w);
        p += sizeof w;
        if (it->ndims)
            memcpy(p, it->dims, it->ndims * sizeof(int64_t));
        p += it->ndims * sizeof(int64_t);
        if (it->size && (err = aclsim__tdt_copy(api, "an item's data", p, it->data, it->size,
                                                false))) {
            free(m);
            return err;
        }
        p += it->size;
    }
    *out = m;
    return ACL_SUCCESS;
}

aclError aclsim__tdt_unpack(const struct aclsim__tdt_msg *m, acltdtDataset *ds, const char *api)
{
    const unsigned char *p = m->data, *end = m->data + m->size;
    while (p < end) {
        struct wire w;
        memcpy(&w, p, sizeof w);
        p += sizeof w;
        acltdtDataItem *it = item_new(w.type, p, w.ndims, w.dtype,
                                      NULL, w.size);
        p += w.ndims * sizeof(int64_t);
        if (it && w.size) {
            it->data = aclsim__malloc(w.size);
            if (it->data)
                memcpy(it->data, p, w.size);
        }
        p += w.size;
        if (!it || (w.size && !it->data) || !push_item(ds, it)) {
            if (it) {
                free(it->data);
                free(it->dims);
                free(it);
            }
            dataset_clear(ds);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        }
        it->owner = ds;
        ds->received = true;
    }
    ds->received = true;
    return ACL_SUCCESS;
}

aclError aclsim__tdt_check_empty(const acltdtDataset *ds, const char *api)
{
    if (ds->n)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "dataset has %zu items: it must be empty to receive into", ds->n);
    return ACL_SUCCESS;
}
