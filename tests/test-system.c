/*
 * System information: the SoC table as programs see it (aclrtGetDeviceInfo,
 * aclGetDeviceCapability, aclrtGetDeviceCapability, aclrtCheckArchCompatibility,
 * CANN attributes), the user/logic/physical device ids, UUIDs, PCI bus ids,
 * topology, package versions, half-precision conversion, data buffers,
 * element sizes and application logs.
 *
 * Every test starts and ends with the runtime finalized and the configuration
 * variables unset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "acl/acl.h"
#include "acl/acl_platform.h"
#include "aclsim/aclsim.h"
#include "common.h"

static void init_soc(const char *soc, const char *devices)
{
    setenv("ACLSIM_SOC_VERSION", soc, 1);
    assert_int_equal(init_devices(devices, "64M"), ACL_SUCCESS);
}

static int64_t info(uint32_t dev, aclrtDevAttr attr)
{
    int64_t v = -12345;
    EXPECT_OK(aclrtGetDeviceInfo(dev, attr, &v));
    return v;
}

/* ---- the SoC table ---------------------------------------------------------- */

static void test_device_info_by_soc(void **state)
{
    (void)state;
    static const struct { const char *soc; int64_t arch, aicore, vector; } rows[] = {
        {"Ascend910B1", 2201, 24, 48}, {"Ascend910B4", 2201, 20, 40},
        {"Ascend910_9391", 2201, 24, 48}, {"Ascend950PR", 3510, 32, 64},
        {"Ascend310P3", 2002, 8, 7}, {"Ascend310B1", 3002, 1, 1}, {"Ascend910A", 1001, 32, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        init_soc(rows[i].soc, "2");
        assert_string_equal(aclrtGetSocName(), rows[i].soc);
        assert_int_equal(info(1, ACL_DEV_ATTR_NPU_ARCH), rows[i].arch);
        assert_int_equal(info(0, ACL_DEV_ATTR_AICORE_CORE_NUM), rows[i].aicore);
        assert_int_equal(info(0, ACL_DEV_ATTR_CUBE_CORE_NUM), rows[i].aicore);
        assert_int_equal(info(0, ACL_DEV_ATTR_VECTOR_CORE_NUM), rows[i].vector);
        /* aclGetDeviceCapability answers from the same table. */
        int64_t v = -1;
        EXPECT_OK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &v));
        assert_int_equal(v, rows[i].aicore);
        EXPECT_OK(aclGetDeviceCapability(1, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &v));
        assert_int_equal(v, rows[i].vector);
        EXPECT_OK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, &v));
        assert_int_equal(v, info(0, ACL_DEV_ATTR_L2_CACHE_SIZE));
        assert_true(v > 0);
        /* The memory a device reports is the memory it has (ACLSIM_DEVICE_MEMORY). */
        assert_int_equal(info(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE), 64 * (int64_t)MiB);
        assert_true(info(0, ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE) >= 192 * 1024);
        assert_int_equal(info(0, ACL_DEV_ATTR_HD_CONNECT_TYPE), ACL_HOST_DEVICE_CONNECT_TYPE_PCIE);
        assert_int_equal(info(0, ACL_DEV_ATTR_DEVICE_FORM_FACTOR), ACL_DEVICE_FORM_FACTOR_PCIE_CARD);
        assert_int_equal(info(0, ACL_DEV_ATTR_MAX_GRID_DIM_X), 65535);
        ASSERT_OK(reset_and_finalize());
    }
}

static void test_device_info_product_specific(void **state)
{
    (void)state;
    int64_t v = 0;
    init_soc("Ascend910B1", "2");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend 950", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_WARP_SIZE, &v));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "A3", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_ID, &v));
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend950DT", "2");
    assert_int_equal(info(0, ACL_DEV_ATTR_WARP_SIZE), 32);
    assert_true(info(0, ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK) > 0);
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend910_9381", "4");
    assert_int_equal(info(3, ACL_DEV_ATTR_SUPER_POD_DEVICE_ID), 3);
    assert_int_equal(info(3, ACL_DEV_ATTR_PHY_CHIP_ID), 3);
    ASSERT_OK(reset_and_finalize());
    init_soc("IPV350", "1");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_NPU_ARCH, &v));
    /* Argument checks come first, even where the function is not supported. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_NPU_ARCH, NULL));
}

static void test_device_info_bad_input(void **state)
{
    (void)state;
    int64_t v = 0;
    int32_t c = 0;
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_NPU_ARCH, &v));
    init_soc("Ascend910B1", "2");
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, "deviceId 2", aclrtGetDeviceInfo(2, ACL_DEV_ATTR_NPU_ARCH, &v));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetDeviceInfo(0x80000000u, ACL_DEV_ATTR_NPU_ARCH, &v));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "attr 7", aclrtGetDeviceInfo(0, (aclrtDevAttr)7, &v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "deviceInfo", aclGetDeviceCapability(0, (aclDeviceInfo)9, &v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value", aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclGetDeviceCapability(5, ACL_DEVICE_INFO_L2_SIZE, &v));
    EXPECT_OK(aclrtGetDeviceCapability(1, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &c));
    assert_int_equal(c, ACL_DEV_FEATURE_NOT_SUPPORT);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtGetDeviceCapability(0, (aclrtDevFeatureType)2, &c));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value", aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetDeviceCapability(-1, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &c));
}

static void test_arch_compatibility_and_attributes(void **state)
{
    (void)state;
    int32_t ok = -1;
    init_soc("Ascend910B2", "1");
    EXPECT_OK(aclrtCheckArchCompatibility("Ascend910_9391", &ok));
    assert_int_equal(ok, 1);   /* same architecture (2201) */
    EXPECT_OK(aclrtCheckArchCompatibility("Ascend310P3", &ok));
    assert_int_equal(ok, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "Ascend910", aclrtCheckArchCompatibility("Ascend910", &ok));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "canCompatible", aclrtCheckArchCompatibility("Ascend910B1", NULL));
    const aclCannAttr *list = NULL;
    size_t n = 99;
    EXPECT_OK(aclGetCannAttributeList(&list, &n));
    assert_int_equal(n, 2);
    int32_t v = -1;
    for (size_t i = 0; i < n; i++) {
        EXPECT_OK(aclGetCannAttribute(list[i], &v));
        assert_int_equal(v, 1);
    }
    EXPECT_OK(aclGetCannAttribute(ACL_CANN_ATTR_JIT_COMPILE, &v));
    assert_int_equal(v, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cannAttr", aclGetCannAttribute((aclCannAttr)3, &v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "num", aclGetCannAttributeList(&list, NULL));
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend310P1", "1");   /* no bfloat16 or INF/NaN mode there */
    EXPECT_OK(aclGetCannAttributeList(&list, &n));
    assert_int_equal(n, 0);
    EXPECT_OK(aclGetCannAttribute(ACL_CANN_ATTR_BF16, &v));
    assert_int_equal(v, 0);
}

/* ---- device identities ------------------------------------------------------ */

static void test_device_ids(void **state)
{
    (void)state;
    setenv("ASCEND_RT_VISIBLE_DEVICES", "2,5", 1);
    init_soc("Ascend910B1", "8");
    int32_t id = -1;
    EXPECT_OK(aclrtGetLogicDevIdByUserDevId(0, &id));
    assert_int_equal(id, 2);
    EXPECT_OK(aclrtGetPhyDevIdByUserDevId(1, &id));
    assert_int_equal(id, 5);
    EXPECT_OK(aclrtGetUserDevIdByLogicDevId(5, &id));
    assert_int_equal(id, 1);
    EXPECT_OK(aclrtGetUserDevIdByPhyDevId(2, &id));
    assert_int_equal(id, 0);
    for (int32_t p = 0; p < 8; p++) {   /* outside a container: logic id == physical id */
        EXPECT_OK(aclrtGetLogicDevIdByPhyDevId(p, &id));
        assert_int_equal(id, p);
        EXPECT_OK(aclrtGetPhyDevIdByLogicDevId(p, &id));
        assert_int_equal(id, p);
    }
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, "not visible", aclrtGetUserDevIdByLogicDevId(3, &id));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetUserDevIdByLogicDevId(8, &id));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetLogicDevIdByUserDevId(2, &id));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetPhyDevIdByLogicDevId(-1, &id));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "logicDevId", aclrtGetLogicDevIdByUserDevId(0, NULL));
    /* The device a program sets is its user id; the physical id is the table's. */
    int64_t chip = -1;
    EXPECT_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_PHY_CHIP_ID, &chip));
    assert_int_equal(chip, 5);
}

static void test_uuid_pci_topology(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "8");
    aclrtUuid u[8];
    char bus[8][32];
    for (int32_t d = 0; d < 8; d++) {
        EXPECT_OK(aclrtDeviceGetUuid(d, &u[d]));
        EXPECT_OK(aclrtDeviceGetPCIBusId(d, bus[d], sizeof bus[d]));
        int32_t back = -1;
        EXPECT_OK(aclrtDeviceGetByPCIBusId(bus[d], &back));
        assert_int_equal(back, d);
        for (int32_t e = 0; e < d; e++) {
            assert_memory_not_equal(u[d].bytes, u[e].bytes, sizeof u[d].bytes);
            assert_string_not_equal(bus[d], bus[e]);
        }
    }
    /* Upper-case and domain-less spellings name the same device. */
    char upper[64];
    snprintf(upper, sizeof upper, "%s", bus[6] + 5);
    for (char *c = upper; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    int32_t back = -1;
    EXPECT_OK(aclrtDeviceGetByPCIBusId(upper, &back));
    assert_int_equal(back, 6);
    uint64_t topo = 0;
    EXPECT_OK(aclrtGetDevicesTopo(0, 3, &topo));
    assert_int_equal(topo, ACL_RT_DEVS_TOPOLOGY_PIX);
    EXPECT_OK(aclrtGetDevicesTopo(2, 5, &topo));
    assert_int_equal(topo, ACL_RT_DEVS_TOPOLOGY_PHB);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "two devices", aclrtGetDevicesTopo(1, 1, &topo));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetDevicesTopo(1, 8, &topo));
    char small[8];
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "too small", aclrtDeviceGetPCIBusId(0, small, sizeof small));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "PCI bus id", aclrtDeviceGetByPCIBusId("nonsense", &back));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "PCI bus id", aclrtDeviceGetByPCIBusId("0000:01:00.0x", &back));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, "no visible device", aclrtDeviceGetByPCIBusId("0000:7f:00.0", &back));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "uuid", aclrtDeviceGetUuid(0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtDeviceGetUuid(8, &u[0]));
    /* Identities are stable: the same after finalize and init. */
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend910B1", "8");
    aclrtUuid again;
    EXPECT_OK(aclrtDeviceGetUuid(4, &again));
    assert_memory_equal(again.bytes, u[4].bytes, sizeof again.bytes);
}

/* ---- versions ----------------------------------------------------------------- */

static char home[256];

static void write_version(const char *pkg, const char *version)
{
    char path[512];
    snprintf(path, sizeof path, "%s/share", home);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/share/info", home);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/share/info/%s", home, pkg);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/share/info/%s/version.info", home, pkg);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "Some=thing\nVersion=%s\ntimestamp=20261130\n", version);
    fclose(f);
}

static int32_t version_num(const char *pkg)
{
    int32_t n = -1;
    EXPECT_OK(aclsysGetVersionNum((char *)pkg, &n));
    return n;
}

static void test_versions(void **state)
{
    (void)state;
    snprintf(home, sizeof home, "%s/aclsim-home-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(home));
    char v[ACL_PKG_VERSION_MAX_SIZE];
    unsetenv("ASCEND_HOME_PATH");
    EXPECT_ERR(ACL_ERROR_INVALID_FILE, "ASCEND_HOME_PATH", aclsysGetVersionStr("runtime", v));
    setenv("ASCEND_HOME_PATH", home, 1);
    write_version("runtime", "9.1.0");
    EXPECT_OK(aclsysGetVersionStr("runtime", v));
    assert_string_equal(v, "9.1.0");
    assert_int_equal(version_num("runtime"), 90100000);
    /* alpha < beta < rc < release, by CANN's weights */
    static const char *order[] = {"9.0.0-alpha.1", "9.0.0-alpha.2", "9.0.0-beta.1", "9.0.0-rc.1",
                                  "9.0.0-rc.2", "9.0.0", "9.0.1"};
    int32_t prev = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        write_version("ops_legacy", order[i]);
        int32_t n = version_num("ops-legacy");   /* '-' and '_' are tried both ways */
        assert_true(n > prev);
        prev = n;
    }
    assert_int_equal(prev, 90001000);
    write_version("odd", "nine");
    int32_t n = 0;
    EXPECT_ERR(ACL_ERROR_INTERNAL_ERROR, "nine", aclsysGetVersionNum("odd", &n));
    EXPECT_ERR(ACL_ERROR_INVALID_FILE, "missing-pkg", aclsysGetVersionStr("missing-pkg", v));
    EXPECT_ERR(ACL_ERROR_INVALID_FILE, "driver", aclsysGetVersionStr("driver", v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "package name", aclsysGetVersionStr("../etc", v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "versionStr", aclsysGetVersionStr("runtime", NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "pkgName", aclsysGetVersionNum(NULL, &n));
    aclCANNPackageVersion pv;
    write_version("runtime", "9.1.0");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_OK(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, &pv));
    assert_string_equal(pv.version, "9.1.0");
    assert_string_equal(pv.majorVersion, "9");
    assert_string_equal(pv.minorVersion, "1");
    assert_string_equal(pv.releaseVersion, "0");
    assert_string_equal(pv.patchVersion, "0");
    EXPECT_ERR(ACL_ERROR_INVALID_FILE, "driver", aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER, &pv));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "name", aclsysGetCANNVersion((aclCANNPackageName)99, &pv));
#pragma GCC diagnostic pop
    unsetenv("ASCEND_HOME_PATH");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
    assert_int_equal(system(cmd), 0);
}

/* ---- data types ----------------------------------------------------------------- */

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float float_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static void test_float16(void **state)
{
    (void)state;
    /* Every half converts to float and back unchanged (NaNs stay NaN). */
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = aclFloat16ToFloat((aclFloat16)h);
        bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        if (nan) {
            assert_true(isnan(f));
            assert_true(isnan(aclFloat16ToFloat(aclFloatToFloat16(f))));
        } else {
            assert_int_equal(aclFloatToFloat16(f), h);
        }
    }
    /* Values half-way between neighbours round to the even one; just off the
     * middle they round to the nearer one. */
    for (uint32_t h = 0; h < 0x7bff; h++) {
        float a = aclFloat16ToFloat((aclFloat16)h), b = aclFloat16ToFloat((aclFloat16)(h + 1));
        float mid = (a + b) / 2;   /* exact: a float has 13 more significand bits */
        uint32_t even = (h & 1) ? h + 1 : h;
        assert_int_equal(aclFloatToFloat16(mid), even);
        assert_int_equal(aclFloatToFloat16(float_of(bits_of(mid) + 1)), h + 1);
        if (h)
            assert_int_equal(aclFloatToFloat16(float_of(bits_of(mid) - 1)), h);
    }
    assert_int_equal(aclFloatToFloat16(65504.0f), 0x7bff);
    assert_int_equal(aclFloatToFloat16(65519.99f), 0x7bff);
    assert_int_equal(aclFloatToFloat16(65520.0f), 0x7c00);   /* ties to even: infinity */
    assert_int_equal(aclFloatToFloat16(-1e10f), 0xfc00);
    assert_int_equal(aclFloatToFloat16(INFINITY), 0x7c00);
    assert_int_equal(aclFloatToFloat16(-0.0f), 0x8000);
    assert_int_equal(aclFloatToFloat16(1e-8f), 0);          /* below half the smallest subnormal */
    assert_int_equal(aclFloatToFloat16(5.9604645e-8f), 1);  /* the smallest subnormal */
    assert_int_equal(aclFloatToFloat16(2.98023224e-8f), 0); /* exactly half of it: ties to even */
    assert_int_equal(aclFloatToFloat16(2.9802326e-8f), 1);  /* a little more */
    assert_true(isnan(aclFloat16ToFloat(aclFloatToFloat16(NAN))));
    assert_true(aclFloat16ToFloat(0x3c00) == 1.0f);
    assert_true(aclFloat16ToFloat(0xc000) == -2.0f);
}

static void test_data_type_size(void **state)
{
    (void)state;
    static const struct { aclDataType t; size_t size; } rows[] = {
        {ACL_DT_UNDEFINED, 0}, {ACL_STRING, 0}, {ACL_FLOAT, 4}, {ACL_FLOAT16, 2}, {ACL_INT8, 1},
        {ACL_INT32, 4}, {ACL_UINT8, 1}, {ACL_INT16, 2}, {ACL_UINT16, 2}, {ACL_UINT32, 4},
        {ACL_INT64, 8}, {ACL_UINT64, 8}, {ACL_DOUBLE, 8}, {ACL_BOOL, 1}, {ACL_COMPLEX64, 8},
        {ACL_COMPLEX128, 16}, {ACL_BF16, 2}, {ACL_INT4, 1}, {ACL_UINT1, 1}, {ACL_COMPLEX32, 4},
        {ACL_HIFLOAT8, 1}, {ACL_FLOAT8_E5M2, 1}, {ACL_FLOAT8_E4M3FN, 1}, {ACL_FLOAT8_E8M0, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(aclDataTypeSize(rows[i].t), rows[i].size);
}

static void test_data_buffer(void **state)
{
    (void)state;
    char mem[64], other[8];
    aclDataBuffer *b = aclCreateDataBuffer(mem, sizeof mem);
    assert_non_null(b);
    assert_ptr_equal(aclGetDataBufferAddr(b), mem);
    assert_int_equal(aclGetDataBufferSizeV2(b), sizeof mem);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    assert_int_equal(aclGetDataBufferSize(b), sizeof mem);
#pragma GCC diagnostic pop
    EXPECT_OK(aclUpdateDataBuffer(b, other, sizeof other));
    assert_ptr_equal(aclGetDataBufferAddr(b), other);
    assert_int_equal(aclGetDataBufferSizeV2(b), sizeof other);
    aclDataBuffer *empty = aclCreateDataBuffer(NULL, 0);   /* allowed: filled in later */
    assert_non_null(empty);
    assert_null(aclGetDataBufferAddr(empty));
    EXPECT_OK(aclDestroyDataBuffer(empty));
    EXPECT_OK(aclDestroyDataBuffer(b));
    /* A destroyed buffer is recognised, never read. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live data buffer", aclDestroyDataBuffer(b));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live data buffer", aclUpdateDataBuffer(b, mem, 1));
    assert_null(aclGetDataBufferAddr(b));
    expect_msg("aclGetDataBufferAddr", "not a live data buffer");
    assert_int_equal(aclGetDataBufferSizeV2(b), 0);
    expect_msg("not a live data buffer");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "NULL", aclDestroyDataBuffer(NULL));
    assert_null(aclGetDataBufferAddr(NULL));
    drain_msg();
}

static void test_app_log(void **state)
{
    (void)state;
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "1", 1);
    setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
    init_soc("Ascend910B1", "1");
    char path[] = "/tmp/aclsim-applog-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    ACL_APP_LOG(ACL_INFO, "hello %d", 42);
    ACL_APP_LOG(ACL_DEBUG, "too quiet %d", 1);   /* below the level: not printed */
    aclAppLog((aclLogLevel)7, "f", "x.c", 1, "bad level");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[1024] = {0};
    assert_true(pread(fd, text, sizeof text - 1, 0) > 0);
    close(fd);
    unlink(path);
    assert_non_null(strstr(text, "[INFO]"));
    assert_non_null(strstr(text, "APP test-system.c:"));
    assert_non_null(strstr(text, "test_app_log: hello 42"));
    assert_null(strstr(text, "too quiet"));
    assert_null(strstr(text, "bad level"));
    unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
    unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    EXPECT_OK(aclFinalize());
    init_soc("Ascend910B1", "1");   /* logging quiet again for the teardown */
}


/* ---- settings and limits -------------------------------------------------------- */

static void test_sys_param_opts(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "2");
    int64_t v = -1;
    EXPECT_OK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
    assert_int_equal(v, 0);   /* CANN's default */
    EXPECT_OK(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 2));
    EXPECT_OK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
    assert_int_equal(v, 2);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value 4", aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 4));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "opt 9", aclrtSetSysParamOpt((aclSysParamOpt)9, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value", aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, NULL));
    /* Context parameters have no default, and belong to their context. */
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not been set", aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    EXPECT_OK(aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 1));
    EXPECT_OK(aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    assert_int_equal(v, 1);
    aclrtContext other;
    EXPECT_OK(aclrtCreateContext(&other, 1));   /* becomes current */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not been set", aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    EXPECT_OK(aclrtDestroyContext(other));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v));
    assert_int_equal(v, 1);
    /* aclFinalize forgets process parameters. */
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend910B1", "1");
    EXPECT_OK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
    assert_int_equal(v, 0);
}

static size_t limit_of(aclrtDeviceLimit l)
{
    size_t v = 0;
    EXPECT_OK(aclrtDeviceGetLimit(l, &v));
    return v;
}

static void test_device_limits(void **state)
{
    (void)state;
    init_soc("Ascend910B2", "2");
    assert_int_equal(limit_of(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE), 32768);
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 40000));
    assert_int_equal(limit_of(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE), 49152);   /* 16K multiple */
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 100));
    assert_int_equal(limit_of(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE), 32768);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "out of range", aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 196609));
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 1025));
    assert_int_equal(limit_of(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE), 1032);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 1000));
    size_t v = 0;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B2", aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, &v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "limit 5", aclrtDeviceSetLimit((aclrtDeviceLimit)5, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value", aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, NULL));
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend950PR", "1");
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, 200));
    assert_int_equal(limit_of(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE), 256 * 32);   /* per warp */
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE, 500));
    assert_int_equal(limit_of(ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE), 512);
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "both be 0", aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 131073));
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend310P3", "1");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 40000));
}

static uint32_t res(int32_t dev, aclrtDevResLimitType t)
{
    uint32_t v = 0;
    EXPECT_OK(aclrtGetDeviceResLimit(dev, t, &v));
    return v;
}

static uint32_t thread_res(aclrtDevResLimitType t)
{
    uint32_t v = 0;
    EXPECT_OK(aclrtGetResInCurrentThread(t, &v));
    return v;
}

static void test_resource_limits(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "2");
    EXPECT_OK(aclrtSetDevice(0));
    assert_int_equal(res(0, ACL_RT_DEV_RES_CUBE_CORE), 24);   /* the hardware's */
    assert_int_equal(res(0, ACL_RT_DEV_RES_VECTOR_CORE), 48);
    EXPECT_OK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 4));
    assert_int_equal(res(0, ACL_RT_DEV_RES_CUBE_CORE), 4);
    assert_int_equal(res(1, ACL_RT_DEV_RES_CUBE_CORE), 24);
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    uint32_t v = 0;
    EXPECT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
    assert_int_equal(v, 4);   /* the process's, for its device */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aclrtSetStreamResLimit first", aclrtUseStreamResInCurrentThread(s));
    EXPECT_OK(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, 2));
    EXPECT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
    assert_int_equal(v, 2);
    EXPECT_OK(aclrtGetStreamResLimit(NULL, ACL_RT_DEV_RES_CUBE_CORE, &v));
    assert_int_equal(v, 4);   /* the default stream has none of its own */
    assert_int_equal(thread_res(ACL_RT_DEV_RES_CUBE_CORE), 4);
    EXPECT_OK(aclrtUseStreamResInCurrentThread(s));
    assert_int_equal(thread_res(ACL_RT_DEV_RES_CUBE_CORE), 2);
    assert_int_equal(thread_res(ACL_RT_DEV_RES_VECTOR_CORE), 48);
    EXPECT_OK(aclrtUnuseStreamResInCurrentThread(s));
    assert_int_equal(thread_res(ACL_RT_DEV_RES_CUBE_CORE), 4);
    EXPECT_OK(aclrtResetStreamResLimit(s));
    EXPECT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
    assert_int_equal(v, 4);
    /* A destroyed stream's limits do not pass to the next stream in its place. */
    EXPECT_OK(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, 3));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
    assert_int_equal(v, 4);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtResetDeviceResLimit(0));
    assert_int_equal(res(0, ACL_RT_DEV_RES_CUBE_CORE), 24);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "1..24", aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 25));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "type 2", aclrtSetDeviceResLimit(0, (aclrtDevResLimitType)2, 1));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtSetDeviceResLimit(2, ACL_RT_DEV_RES_CUBE_CORE, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value", aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, NULL));
}

/* Blocks that count how many of them run at once. */
static atomic_int active, most;

static void k_overlap(int wait_ms)
{
    int now = atomic_fetch_add(&active, 1) + 1;
    for (int m = atomic_load(&most); now > m && !atomic_compare_exchange_weak(&most, &m, now);)
        ;
    /* Wait (bounded) for a second block to join: only possible without a limit. */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (atomic_load(&active) < 2 &&
             (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < wait_ms);
    atomic_fetch_sub(&active, 1);
}
ACLSIM_KERNEL_REGISTER(k_overlap, int);

static int run_overlap(int blocks)
{
    atomic_store(&active, 0);
    atomic_store(&most, 0);
    int wait_ms = 200;
    void *args[] = {&wait_ms};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_overlap), (uint32_t)blocks, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    return atomic_load(&most);
}

static void test_resource_limit_takes_effect(void **state)
{
    (void)state;
    setenv("ACLSIM_WORKERS", "4", 1);
    init_soc("Ascend910B1", "1");
    EXPECT_OK(aclrtSetDevice(0));
    assert_true(run_overlap(4) >= 2);   /* blocks run on several workers */
    EXPECT_OK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 1));
    assert_int_equal(run_overlap(3), 1);   /* one core: one block at a time */
    EXPECT_OK(aclrtResetDeviceResLimit(0));
    assert_true(run_overlap(4) >= 2);
}

static void test_primary_context_and_ts(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "2");
    int32_t active = -1;
    uint32_t flags = 7;
    EXPECT_OK(aclrtGetPrimaryCtxState(1, &flags, &active));
    assert_int_equal(active, 0);
    assert_int_equal(flags, 0);
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtGetPrimaryCtxState(1, NULL, &active));
    assert_int_equal(active, 1);
    EXPECT_OK(aclrtResetDevice(1));
    EXPECT_OK(aclrtGetPrimaryCtxState(1, NULL, &active));
    assert_int_equal(active, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "active", aclrtGetPrimaryCtxState(1, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetPrimaryCtxState(2, NULL, &active));
    EXPECT_OK(aclrtSetTsDevice(ACL_TS_ID_AIVECTOR));
    EXPECT_OK(aclrtSetTsDevice(ACL_TS_ID_AICORE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "tsId 2", aclrtSetTsDevice(ACL_TS_ID_RESERVED));
}

static void k_spin(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}
ACLSIM_KERNEL_REGISTER(k_spin, int);

static void test_utilization(void **state)
{
    (void)state;
    setenv("ACLSIM_WORKERS", "2", 1);
    init_soc("Ascend910B1", "1");
    EXPECT_OK(aclrtSetDevice(0));
    aclrtUtilizationInfo u = {0};
    EXPECT_OK(aclrtGetDeviceUtilizationRate(0, &u));   /* starts the interval */
    int ms = 100;
    void *args[] = {&ms};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_spin), 1, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtGetDeviceUtilizationRate(0, &u));
    assert_true(u.cubeUtilization >= 10);   /* one of two workers ran most of the interval
                                                (slow sanitizer builds add launch time) */
    assert_int_equal(u.vectorUtilization, u.cubeUtilization);
    assert_int_equal(u.memoryUtilization, -1);
    usleep(50 * 1000);
    EXPECT_OK(aclrtGetDeviceUtilizationRate(0, &u));
    assert_int_equal(u.cubeUtilization, 0);   /* idle since */
    u.utilizationExtend = (aclrtUtilizationExtendInfo *)&u;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "utilizationExtend", aclrtGetDeviceUtilizationRate(0, &u));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "utilizationInfo", aclrtGetDeviceUtilizationRate(0, NULL));
}

/* ---- platform, atomics, memory usage, groups ------------------------------------ */

static void test_platform_info(void **state)
{
    (void)state;
    init_soc("Ascend950PR", "1");
    char v[64];
    EXPECT_OK(aclplatformGetDeviceInfo(ACL_PLATFORM_SOC_VERSION, v, sizeof v));
    assert_string_equal(v, "Ascend950PR");
    EXPECT_OK(aclplatformGetDeviceInfo(ACL_PLATFORM_NPU_ARCH, v, sizeof v));
    assert_int_equal(atoi(v), DAV_3510);
    EXPECT_OK(aclplatformGetDeviceInfo(ACL_PLATFORM_AICORE_CNT, v, sizeof v));
    assert_int_equal(atoi(v), info(0, ACL_DEV_ATTR_AICORE_CORE_NUM));
    EXPECT_OK(aclplatformGetDeviceInfo(ACL_PLATFORM_AICORE_UB_SIZE, v, sizeof v));
    assert_int_equal(atoll(v), info(0, ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE));
    EXPECT_OK(aclplatformGetDeviceInfo(ACL_PLATFORM_MEMORY_SIZE, v, sizeof v));
    assert_int_equal(atoll(v), 64 * (long long)MiB);
    EXPECT_OK(aclplatformGetDeviceInfo(ACL_PLATFORM_MEMORY_TYPE, v, sizeof v));
    assert_int_equal(atoi(v), HBM);
    for (int i = 0; i <= ACL_PLATFORM_MEMORY_TYPE; i++)
        EXPECT_OK(aclplatformGetDeviceInfo((aclplatformDevInfo)i, v, sizeof v));
    char small[4];
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "too small", aclplatformGetDeviceInfo(ACL_PLATFORM_SOC_VERSION, small, sizeof small));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "infoType", aclplatformGetDeviceInfo((aclplatformDevInfo)17, v, sizeof v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value", aclplatformGetDeviceInfo(ACL_PLATFORM_L1_SIZE, NULL, 8));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "instruction tables",
               aclplatformGetInstructionInfo(ACL_PLATFORM_CORE_TYPE_AI_CORE, "Intrinsic_vexp", v, sizeof v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "instruction",
               aclplatformGetInstructionInfo(ACL_PLATFORM_CORE_TYPE_AI_CORE, NULL, v, sizeof v));
}

static void test_atomic_capabilities(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "2");
    const aclrtAtomicOperation ops[] = {ACL_RT_ATOMIC_OPERATION_INTEGER_ADD, ACL_RT_ATOMIC_OPERATION_FLOAT_ADD,
                                        ACL_RT_ATOMIC_OPERATION_DMA_ADD, ACL_RT_ATOMIC_OPERATION_CAS};
    uint32_t caps[4] = {0};
    EXPECT_OK(aclrtDeviceGetHostAtomicCapabilities(caps, ops, 4, 0));
    assert_true(caps[0] & ACL_RT_ATOMIC_CAPABILITY_SIGNED);
    assert_true(caps[0] & ACL_RT_ATOMIC_CAPABILITY_SCALAR64);
    assert_true(caps[1] & ACL_RT_ATOMIC_CAPABILITY_SCALAR32);
    assert_false(caps[1] & ACL_RT_ATOMIC_CAPABILITY_SIGNED);
    assert_int_equal(caps[2], 0);
    assert_true(caps[3] & ACL_RT_ATOMIC_CAPABILITY_SCALAR32);
    uint32_t p2p[4] = {0};
    EXPECT_OK(aclrtDeviceGetP2PAtomicCapabilities(p2p, ops, 4, 0, 1));
    assert_memory_equal(p2p, caps, sizeof caps);
    /* The capability is real: a host atomic on device memory. */
    EXPECT_OK(aclrtSetDevice(0));
    int64_t *d = NULL;
    EXPECT_OK(aclrtMalloc((void **)&d, sizeof *d, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(d, sizeof *d, 0, sizeof *d));
    __atomic_fetch_add(d, 5, __ATOMIC_SEQ_CST);
    int64_t back = 0;
    EXPECT_OK(aclrtMemcpy(&back, sizeof back, d, sizeof *d, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(back, 5);
    EXPECT_OK(aclrtFree(d));
    const aclrtAtomicOperation bad[] = {(aclrtAtomicOperation)13};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "operations[0]", aclrtDeviceGetHostAtomicCapabilities(caps, bad, 1, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "count", aclrtDeviceGetHostAtomicCapabilities(caps, ops, 0, 0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 1, 0, 2));
}

static void test_mem_usage(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "1");
    EXPECT_OK(aclrtSetDevice(0));
    void *a = NULL, *b = NULL;
    EXPECT_OK(aclrtMalloc(&a, 3 * MiB, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&b, 2 * MiB, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtFree(b));
    aclrtMemUsageInfo u[4];
    size_t n = 0;
    EXPECT_OK(aclrtGetMemUsageInfo(0, u, 4, &n));
    assert_int_equal(n, 2);
    assert_string_equal(u[0].name, "app");   /* the largest first */
    assert_true(u[0].curMemSize >= 3 * MiB && u[0].curMemSize < 4 * MiB);
    assert_true(u[0].memPeakSize >= 5 * MiB);
    assert_string_equal(u[1].name, "device_variables");
    EXPECT_OK(aclrtGetMemUsageInfo(0, u, 1, &n));
    assert_int_equal(n, 1);
    EXPECT_OK(aclrtFree(a));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "inputNum", aclrtGetMemUsageInfo(0, u, 0, &n));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "outputNum", aclrtGetMemUsageInfo(0, u, 1, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetMemUsageInfo(1, u, 1, &n));
}

static void test_groups(void **state)
{
    (void)state;
    init_soc("Ascend310P3", "1");
    uint32_t count = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "count", aclrtGetGroupCount(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Control CPU", aclrtGetGroupCount(&count));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "EP mode", aclrtSetGroup(0));
    assert_null(aclrtCreateGroupInfo());
    expect_msg("aclrtCreateGroupInfo", "Control CPU");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "groupInfo", aclrtDestroyGroupInfo(NULL));
}

/* ---- float overflow ---------------------------------------------------------------- */

static atomic_int seen_mode;

static void k_overflow(int report)
{
    atomic_store(&seen_mode, aclsimFloatOverflowMode());
    if (report)
        aclsimReportFloatOverflow();
}
ACLSIM_KERNEL_REGISTER(k_overflow, int);

static void launch_overflow(aclrtStream s, int report)
{
    void *args[] = {&report};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_overflow), 1, s, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(s));
}

static uint32_t overflow_status(aclrtStream s, void *dev_buf)
{
    uint32_t host[16];
    memset(host, 0xab, sizeof host);
    EXPECT_OK(aclrtGetOverflowStatus(dev_buf, 64, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtMemcpy(host, sizeof host, dev_buf, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 1; i < 16; i++)
        assert_int_equal(host[i], 0);
    return host[0];
}

static void test_float_overflow(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "1");
    EXPECT_OK(aclrtSetDevice(0));
    aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_UNDEF;
    EXPECT_OK(aclrtGetDeviceSatMode(&mode));
    assert_int_equal(mode, ACL_RT_OVERFLOW_MODE_INFNAN);
    aclrtStream before, after;
    EXPECT_OK(aclrtCreateStream(&before));
    EXPECT_OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
    EXPECT_OK(aclrtCreateStream(&after));
    launch_overflow(before, 0);
    assert_int_equal(atomic_load(&seen_mode), ACL_RT_OVERFLOW_MODE_INFNAN);   /* created before */
    launch_overflow(after, 0);
    assert_int_equal(atomic_load(&seen_mode), ACL_RT_OVERFLOW_MODE_SATURATION);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "mode 2", aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF));

    void *buf = NULL;
    EXPECT_OK(aclrtMalloc(&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    assert_int_equal(overflow_status(after, buf), 0);
    launch_overflow(before, 1);
    assert_int_equal(overflow_status(after, buf), 1);   /* per device, not per stream */
    EXPECT_OK(aclrtResetOverflowStatus(after));
    assert_int_equal(overflow_status(after, buf), 0);
    /* Detection off: reports on that stream do not count. */
    uint32_t flag = 7;
    EXPECT_OK(aclrtGetStreamOverflowSwitch(before, &flag));
    assert_int_equal(flag, 1);
    EXPECT_OK(aclrtSetStreamOverflowSwitch(before, 0));
    EXPECT_OK(aclrtGetStreamOverflowSwitch(before, &flag));
    assert_int_equal(flag, 0);
    launch_overflow(before, 1);
    assert_int_equal(overflow_status(after, buf), 0);
    /* The context's overflow word is set by the context's kernels. */
    uint32_t *word = NULL;
    EXPECT_OK(aclrtCtxGetFloatOverflowAddr((void **)&word));
    void *again = NULL;
    EXPECT_OK(aclrtCtxGetFloatOverflowAddr(&again));
    assert_ptr_equal(again, word);
    uint32_t w = 9;
    EXPECT_OK(aclrtMemcpy(&w, sizeof w, word, sizeof w, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(w, 0);
    launch_overflow(after, 1);
    EXPECT_OK(aclrtMemcpy(&w, sizeof w, word, sizeof w, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(w, 1);
    /* The aliases read and clear the same status. */
    EXPECT_OK(aclrtNpuClearFloatOverFlowStatus(0, after));
    EXPECT_OK(aclrtGetFloatOverflowStatus(buf, 64, after));
    EXPECT_OK(aclrtSynchronizeStream(after));
    EXPECT_OK(aclrtMemcpy(&w, sizeof w, buf, sizeof w, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(w, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "outputSize", aclrtGetOverflowStatus(buf, 32, after));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not device memory", aclrtGetOverflowStatus(&w, 64, after));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flag 2", aclrtSetStreamOverflowSwitch(after, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "mode", aclrtGetDeviceSatMode(NULL));
    EXPECT_OK(aclrtFree(buf));
    EXPECT_OK(aclrtDestroyStream(before));
    EXPECT_OK(aclrtDestroyStream(after));
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend310P3", "1");
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtGetDeviceSatMode(&mode));
    assert_int_equal(mode, ACL_RT_OVERFLOW_MODE_SATURATION);
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P3", aclrtSetStreamOverflowSwitch(NULL, 1));
}

/* ---- snapshots ------------------------------------------------------------------- */

static char stages[128];

static uint32_t stage_cb(int32_t device, void *args)
{
    char item[32];
    snprintf(item, sizeof item, "%s%d,", (const char *)args, device);
    strncat(stages, item, sizeof stages - strlen(stages) - 1);
    return 0;
}

static uint32_t failing_stage_cb(int32_t device, void *args)
{
    (void)device;
    (void)args;
    return 1;
}

struct blocked_call { atomic_int done; aclError result; void *ptr; };

static void *malloc_while_locked(void *arg)
{
    struct blocked_call *c = arg;
    aclrtSetDevice(0);
    c->result = aclrtMalloc(&c->ptr, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    atomic_store(&c->done, 1);
    return NULL;
}

static void test_snapshot(void **state)
{
    (void)state;
    init_soc("Ascend910B1", "2");
    EXPECT_OK(aclrtSetDevice(0));
    int pid = (int)getpid();
    int *d = NULL;
    EXPECT_OK(aclrtMalloc((void **)&d, 4 * sizeof *d, ACL_MEM_MALLOC_HUGE_FIRST));
    const int want[4] = {1, 2, 3, 4};
    EXPECT_OK(aclrtMemcpy(d, sizeof want, want, sizeof want, ACL_MEMCPY_HOST_TO_DEVICE));
    stages[0] = '\0';
    EXPECT_OK(aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, stage_cb, "lock"));
    EXPECT_OK(aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_BACKUP_POST, stage_cb, "backup"));
    EXPECT_OK(aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_RESTORE_POST, stage_cb, "restore"));
    EXPECT_OK(aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_UNLOCK_POST, stage_cb, "unlock"));
    EXPECT_ERR(ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED, "already",
               aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, stage_cb, "again"));
    EXPECT_ERR(ACL_ERROR_SNAPSHOT_BACKUP_FAILED, "RUNNING", aclrtSnapShotProcessBackup(pid, NULL));
    EXPECT_OK(aclrtSnapShotProcessLock(pid, NULL));
    EXPECT_ERR(ACL_ERROR_SNAPSHOT_LOCK_FAILED, "LOCKED", aclrtSnapShotProcessLock(pid, NULL));
    /* Device-changing calls of other threads wait for the unlock; the locker's fail. */
    struct blocked_call c = {0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, malloc_while_locked, &c), 0);
    void *p = NULL;
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "locked for a snapshot", aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtSnapShotProcessBackup(pid, NULL));
    /* What the device held at the backup comes back with the restore. */
    d[2] = 99;   /* (device memory is host memory in aclsim: scribble directly) */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not this process", aclrtSnapShotProcessUnlock(pid + 1, NULL));
    EXPECT_OK(aclrtSnapShotProcessRestore(pid, NULL));
    int back[4] = {0};
    usleep(20 * 1000);
    assert_int_equal(atomic_load(&c.done), 0);   /* still waiting */
    EXPECT_OK(aclrtSnapShotProcessUnlock(pid, NULL));
    pthread_join(th, NULL);
    assert_int_equal(c.result, ACL_SUCCESS);
    EXPECT_OK(aclrtMemcpy(back, sizeof back, d, sizeof want, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(back, want, sizeof want);
    assert_string_equal(stages, "lock0,backup0,restore0,unlock0,");
    EXPECT_ERR(ACL_ERROR_SNAPSHOT_UNLOCK_FAILED, "RUNNING", aclrtSnapShotProcessUnlock(pid, NULL));
    EXPECT_ERR(ACL_ERROR_SNAPSHOT_RESTORE_FAILED, NULL, aclrtSnapShotProcessRestore(pid, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not this process", aclrtSnapShotProcessLock(pid + 1, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "reserve", aclrtSnapShotProcessLock(pid, &c));
    /* A failing callback fails its stage. */
    EXPECT_OK(aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, failing_stage_cb, NULL));
    EXPECT_ERR(ACL_ERROR_SNAPSHOT_CALLBACK_FAILED, "stage 0", aclrtSnapShotProcessLock(pid, NULL));
    EXPECT_OK(aclrtSnapShotCallbackUnregister(ACL_RT_SNAPSHOT_LOCK_PRE, failing_stage_cb));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not registered", aclrtSnapShotCallbackUnregister(ACL_RT_SNAPSHOT_LOCK_PRE, failing_stage_cb));
    for (int s = ACL_RT_SNAPSHOT_LOCK_PRE; s <= ACL_RT_SNAPSHOT_UNLOCK_POST; s++)
        aclrtSnapShotCallbackUnregister((aclrtSnapShotStage)s, stage_cb);
    drain_msg();
    /* aclFinalize ends a lock and releases waiting calls. */
    EXPECT_OK(aclrtSnapShotProcessLock(pid, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "locked for a snapshot", aclrtFree(c.ptr));   /* the locker */
    ASSERT_OK(reset_and_finalize());
    init_soc("Ascend950DT", "1");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend950DT", aclrtSnapShotProcessLock(pid, NULL));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_clean, teardown_clean)
    const struct CMUnitTest tests[] = {
        T(test_device_info_by_soc),
        T(test_device_info_product_specific),
        T(test_device_info_bad_input),
        T(test_arch_compatibility_and_attributes),
        T(test_device_ids),
        T(test_uuid_pci_topology),
        T(test_versions),
        T(test_float16),
        T(test_data_type_size),
        T(test_data_buffer),
        T(test_app_log),
        T(test_sys_param_opts),
        T(test_device_limits),
        T(test_resource_limits),
        T(test_resource_limit_takes_effect),
        T(test_primary_context_and_ts),
        T(test_utilization),
        T(test_platform_info),
        T(test_atomic_capabilities),
        T(test_mem_usage),
        T(test_groups),
        T(test_float_overflow),
        T(test_snapshot),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
