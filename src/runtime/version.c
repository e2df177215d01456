/*
 * Package versions, read as CANN reads them: from
 * $ASCEND_HOME_PATH/share/info/<package>/version.info, line "Version=...".
 * aclsim's install tree ships share/info/runtime/version.info with the CANN
 * version whose runtime API it implements, and share/info/aclsim/version.info
 * with its own version (set_env.sh sets ASCEND_HOME_PATH). There is no driver
 * package on a CPU: asking for "driver" gives 100003 as on a machine without one.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* numeric version = major * 1e7 + minor * 1e5 + patch * 1e3, minus 300/200/100
 * for alpha/beta/rc plus the pre-release number (CANN's weights). */
#define W_MAJOR 10000000
#define W_MINOR 100000
#define W_PATCH 1000

static aclError read_version(const char *api, const char *pkg, char *out, size_t cap)
{
    if (strcmp(pkg, "driver") == 0 || strcmp(pkg, "firmware") == 0)
        return aclsim__fail(ACL_ERROR_INVALID_FILE, api,
                            "there is no %s package: aclsim simulates the devices on the CPU", pkg);
    if (!*pkg || strchr(pkg, '/') || strcmp(pkg, ".") == 0 || strcmp(pkg, "..") == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "pkgName \"%s\" is not a package name", pkg);
    const char *home = getenv("ASCEND_HOME_PATH");
    if (!home || !*home)
        return aclsim__fail(ACL_ERROR_INVALID_FILE, api,
                            "ASCEND_HOME_PATH is not set (source <aclsim prefix>/set_env.sh)");
    /* CANN tries the name with '-' and '_' swapped when the first is missing. */
    char alt[256];
    snprintf(alt, sizeof alt, "%s", pkg);
    for (char *c = alt; *c; c++)
        *c = *c == '-' ? '_' : *c == '_' ? '-' : *c;
    for (int attempt = 0; attempt < 2; attempt++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/share/info/%s/version.info", home, attempt ? alt : pkg);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        char line[512];
        bool found = false;
        while (!found && fgets(line, sizeof line, f)) {
            char *v = strstr(line, "Version=");
            if (!v)
                continue;
            v += strlen("Version=");
            while (isspace((unsigned char)*v))
                v++;
            size_t n = strcspn(v, "\r\n");
            while (n && isspace((unsigned char)v[n - 1]))
                n--;
            if (n && n < cap) {
                memcpy(out, v, n);
                out[n] = '\0';
                found = true;
            }
        }
        fclose(f);
        if (!found)
            return aclsim__fail(ACL_ERROR_INVALID_FILE, api, "%s has no usable \"Version=\" line",
                                path);
        return ACL_SUCCESS;
    }
    return aclsim__fail(ACL_ERROR_INVALID_FILE, api,
                        "no version file for package \"%s\" under %s/share/info (is the package "
                        "name right?)", pkg, home);
}

aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    static const char api[] = "aclsysGetVersionStr";
    if (!versionStr || !pkgName)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !versionStr ? "versionStr" : "pkgName");
    return read_version(api, pkgName, versionStr, ACL_PKG_VERSION_MAX_SIZE);
}

/* Reads a decimal number at *s; false if there is none. */
static bool number(const char **s, long *out)
{
    if (!isdigit((unsigned char)**s))
        return false;
    char *end;
    *out = strtol(*s, &end, 10);
    *s = end;
    return *out <= 999;
}

static bool version_number(const char *v, int32_t *out)
{
    long major, minor, patch, pre = 0;
    if (!number(&v, &major) || *v++ != '.' || !number(&v, &minor) || *v++ != '.' ||
        !number(&v, &patch) || major > 200 || minor > 99)
        return false;
    int32_t n = (int32_t)(major * W_MAJOR + minor * W_MINOR + patch * W_PATCH);
    if (!*v) {
        *out = n;
        return true;
    }
    if (*v == '.' || *v == '-')   /* at most one separator before the keyword */
        v++;
    static const struct { const char *word; int weight; } kinds[] = {
        {"alpha", 300}, {"beta", 200}, {"rc", 100}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t len = strlen(kinds[i].word);
        if (strncasecmp(v, kinds[i].word, len) != 0)
            continue;
        v += len;
        if (*v == '.' || *v == '-')
            v++;
        if (*v && (!number(&v, &pre) || *v))
            return false;
        *out = n - kinds[i].weight + (int32_t)pre;
        return true;
    }
    return false;
}

aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    static const char api[] = "aclsysGetVersionNum";
    if (!pkgName || !versionNum)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !pkgName ? "pkgName" : "versionNum");
    char v[ACL_PKG_VERSION_MAX_SIZE];
    aclError err = read_version(api, pkgName, v, sizeof v);
    if (err)
        return err;
    if (!version_number(v, versionNum))
        return aclsim__fail(ACL_ERROR_INTERNAL_ERROR, api,
                            "version \"%s\" of package \"%s\" is not of the form X.Y.Z[-alpha|beta|rc.N]",
                            v, pkgName);
    return ACL_SUCCESS;
}

aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)
{
    static const char api[] = "aclsysGetCANNVersion";
    if (!version)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "version is NULL");
    static const char *const pkgs[] = {"runtime", "runtime", "bisheng-compiler", "hccl",
                                       "oam-tools", "ops-legacy", "ops-legacy", "driver"};
    if ((unsigned)name >= sizeof pkgs / sizeof pkgs[0])
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "name %d is not an aclCANNPackageName",
                            (int)name);
    char v[ACL_PKG_VERSION_MAX_SIZE];
    aclError err = read_version(api, pkgs[name], v, sizeof v);
    if (err)
        return err;
    /* version, then its dot-separated parts: major, minor, release, patch. */
    memset(version, 0, sizeof *version);
    snprintf(version->version, sizeof version->version, "%s", v);
    char *parts[4] = {version->majorVersion, version->minorVersion, version->releaseVersion,
                      version->patchVersion};
    const char *p = v;
    int n = 0;
    for (; n < 4 && *p; n++) {
        size_t len = strcspn(p, ".");
        if (len >= ACL_PKG_VERSION_PARTS_MAX_SIZE)
            len = ACL_PKG_VERSION_PARTS_MAX_SIZE - 1;
        memcpy(parts[n], p, len);
        p += strcspn(p, ".");
        if (*p)
            p++;
    }
    if (n < 2)
        return aclsim__fail(ACL_ERROR_INVALID_FILE, api, "version \"%s\" has fewer than two parts", v);
    for (; n < 4; n++)
        parts[n][0] = '0';
    return ACL_SUCCESS;
}
