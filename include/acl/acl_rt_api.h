/*
 * aclsim: C++ convenience overloads (acl/acl_rt_api.h).
 *
 * For C++ callers the device-variable functions also accept the variable
 * itself: aclrtGetSymbolSize(myVar, &size) forwards &myVar to the C API.
 * In C this header only includes acl/acl_rt.h.
 */
#ifndef ACLSIM_ACL_ACL_RT_API_H
#define ACLSIM_ACL_ACL_RT_API_H

#include "acl/acl_rt.h"

#ifdef __cplusplus

template <typename T>
static inline aclError aclrtGetSymbolAddress(const T &symbol, void **devPtr)
{
    return ::aclrtGetSymbolAddress(static_cast<const void *>(&symbol), devPtr);
}

template <typename T>
static inline aclError aclrtGetSymbolSize(const T &symbol, size_t *size)
{
    return ::aclrtGetSymbolSize(static_cast<const void *>(&symbol), size);
}

template <typename T>
static inline aclError aclrtMemcpyFromSymbol(void *dst, size_t dstMax, const T &symbol, size_t count,
                                             size_t offset, aclrtMemcpyKind kind)
{
    return ::aclrtMemcpyFromSymbol(dst, dstMax, static_cast<const void *>(&symbol), count, offset, kind);
}

template <typename T>
static inline aclError aclrtMemcpyFromSymbolAsync(void *dst, size_t dstMax, const T &symbol, size_t count,
                                                  size_t offset, aclrtMemcpyKind kind, aclrtStream stream)
{
    return ::aclrtMemcpyFromSymbolAsync(dst, dstMax, static_cast<const void *>(&symbol), count, offset, kind,
                                        stream);
}

template <typename T>
static inline aclError aclrtMemcpyToSymbol(const T &symbol, const void *src, size_t count, size_t offset,
                                           aclrtMemcpyKind kind)
{
    return ::aclrtMemcpyToSymbol(static_cast<const void *>(&symbol), src, count, offset, kind);
}

template <typename T>
static inline aclError aclrtMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count, size_t offset,
                                                aclrtMemcpyKind kind, aclrtStream stream)
{
    return ::aclrtMemcpyToSymbolAsync(static_cast<const void *>(&symbol), src, count, offset, kind, stream);
}

#endif /* __cplusplus */

#endif /* ACLSIM_ACL_ACL_RT_API_H */
