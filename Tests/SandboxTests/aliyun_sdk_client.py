"""Alibaba Cloud's official Python SDKs (aliyun-python-sdk-vod, oss2) against the sandbox.

Usage: aliyun_sdk_client.py PORT ACCESS_KEY_ID ACCESS_KEY_SECRET STS_TTL_SECONDS
Prints one JSON report; every step uses the SDKs' own signing (OSS's V4, as a new account must), so the sandbox
must agree with it; a V1-signed request shows whether the sandbox takes V1 as an older account does.
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import oss2
from aliyunsdkcore.acs_exception.exceptions import ServerException
from aliyunsdkcore.client import AcsClient
from aliyunsdkvod.request.v20170321 import (CreateUploadImageRequest, CreateUploadVideoRequest, DeleteVideoRequest,
                                            GetURLUploadInfosRequest, GetVideoInfoRequest, RefreshUploadVideoRequest,
                                            UpdateVideoInfoRequest, UploadMediaByURLRequest)

port, key_id, key_secret, sts_ttl = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
report = {}


def call(client, request):
    request.set_endpoint("127.0.0.1")
    request.set_protocol_type("http")
    return json.loads(client.do_action_with_exception(request))


def decode(answer):
    address = json.loads(base64.b64decode(answer["UploadAddress"]))
    auth = json.loads(base64.b64decode(answer["UploadAuth"]))
    return address, auth


def bucket_for(address, auth):
    credentials = oss2.StsAuth(auth["AccessKeyId"], auth["AccessKeySecret"], auth["SecurityToken"],
                               auth_version=oss2.AUTH_VERSION_4)
    return oss2.Bucket(credentials, address["Endpoint"], address["Bucket"], region=auth["Region"])


def oss_error(action):
    """The OSS error an action ends with: [HTTP status, Code, EC], or None."""
    try:
        action()
    except oss2.exceptions.OssError as error:
        return [error.status, error.code, error.ec]
    return None


def server_error_code(action):
    try:
        action()
    except ServerException as error:
        return error.get_error_code()
    except oss2.exceptions.OssError as error:
        return error.code
    return None


vod = AcsClient(key_id, key_secret, "cn-shanghai", port=port, auto_retry=False)
data = os.urandom(300 * 1024 + 17)
part_size = 128 * 1024

create = CreateUploadVideoRequest.CreateUploadVideoRequest()
create.set_Title("SDK upload")
create.set_FileName("clip.mp4")
create.set_FileSize(len(data))
create.set_ReferenceId("sdk-reference-1")
created = call(vod, create)
video_id = created["VideoId"]
address, auth = decode(created)
report["videoId"] = video_id
report["addressKeys"] = sorted(address)
report["authKeys"] = sorted(auth)

bucket = bucket_for(address, auth)
key = address["FileName"]
upload_id = bucket.init_multipart_upload(key).upload_id
parts = [oss2.models.PartInfo(1, bucket.upload_part(key, upload_id, 1, data[:part_size]).etag)]
report["listedAfterFirstPart"] = [p.part_number for p in bucket.list_parts(key, upload_id).parts]

# The temporary credential expires: OSS refuses it, RefreshUploadVideo gives a new one for the same object.
time.sleep(sts_ttl + 0.5)
report["expiredCode"] = server_error_code(lambda: bucket.upload_part(key, upload_id, 2, data[part_size:2 * part_size]))
refresh = RefreshUploadVideoRequest.RefreshUploadVideoRequest()
refresh.set_VideoId(video_id)
refreshed = call(vod, refresh)
address2, auth2 = decode(refreshed)
report["refreshSameObject"] = address2["FileName"] == key and refreshed["VideoId"] == video_id
bucket = bucket_for(address2, auth2)
for number in (2, 3):
    chunk = data[(number - 1) * part_size:number * part_size]
    parts.append(oss2.models.PartInfo(number, bucket.upload_part(key, upload_id, number, chunk).etag))
report["otherObjectCode"] = server_error_code(lambda: bucket.put_object("sv/elsewhere.mp4", b"x"))
bucket.complete_multipart_upload(key, upload_id, parts)

oss_endpoint = "http://127.0.0.1:%d" % port
owner = oss2.Bucket(oss2.AuthV4(key_id, key_secret), oss_endpoint, address["Bucket"], region="cn-shanghai")
report["objectIdentical"] = owner.get_object(key).read() == data
report["wrongSecretCode"] = server_error_code(
    lambda: oss2.Bucket(oss2.AuthV4(key_id, "wrong"), oss_endpoint, address["Bucket"], region="cn-shanghai")
    .get_object(key))
report["wrongRegion"] = oss_error(
    lambda: oss2.Bucket(oss2.AuthV4(key_id, key_secret), oss_endpoint, address["Bucket"], region="cn-hangzhou")
    .get_object(key))
# A presigned V4 URL as oss2 makes it reads the object; VOD pulls it into a new video (UploadMediaByURL), whose
# job GetURLUploadInfos follows to SUCCESS.
shared = owner.sign_url("GET", key, 600)
report["presignedIdentical"] = urllib.request.urlopen(shared).read() == data
forged = shared.replace("x-oss-expires=600", "x-oss-expires=601")
try:
    urllib.request.urlopen(forged)
    report["forgedStatus"] = 200
except urllib.error.HTTPError as error:
    report["forgedStatus"] = error.code
pull = UploadMediaByURLRequest.UploadMediaByURLRequest()
encoded = urllib.parse.quote(shared, safe="")
pull.set_UploadURLs(encoded)
pull.set_UploadMetadatas(json.dumps([{"SourceURL": encoded, "Title": "Pulled"}]))
pull.set_SessionId("sdk-session-1")
job_id = call(vod, pull)["UploadJobs"][0]["JobId"]
infos = GetURLUploadInfosRequest.GetURLUploadInfosRequest()
infos.set_JobIds(job_id)
deadline = time.time() + 20
job = {}
while time.time() < deadline:
    job = call(vod, infos)["URLUploadInfoList"][0]
    if job["Status"] in ("SUCCESS", "DOWNLOAD_FAIL", "UPLOAD_FAIL"):
        break
    time.sleep(0.1)
report["pullStatus"] = job["Status"]
pulled = GetVideoInfoRequest.GetVideoInfoRequest()
pulled.set_VideoId(job.get("MediaId", ""))
report["pulledTitle"] = call(vod, pulled)["Video"]["Title"]
report["repeatedSessionCode"] = server_error_code(lambda: call(vod, pull))
by_url = GetURLUploadInfosRequest.GetURLUploadInfosRequest()
by_url.set_UploadURLs(encoded)
report["jobsByURL"] = [j["JobId"] == job_id for j in call(vod, by_url)["URLUploadInfoList"]]
report["v1Answer"] = oss_error(
    lambda: oss2.Bucket(oss2.Auth(key_id, key_secret), oss_endpoint, address["Bucket"]).get_object(key))

statuses = []
get = GetVideoInfoRequest.GetVideoInfoRequest()
get.set_VideoId(video_id)
deadline = time.time() + 20
while time.time() < deadline:
    status = call(vod, get)["Video"]["Status"]
    if not statuses or statuses[-1] != status:
        statuses.append(status)
    if status == "Normal":
        break
    time.sleep(0.1)
report["statuses"] = statuses

update = UpdateVideoInfoRequest.UpdateVideoInfoRequest()
update.set_VideoId(video_id)
update.set_Title("Renamed")
update.set_Tags("a,b")
call(vod, update)
info = call(vod, get)["Video"]
report["titleAfterUpdate"] = info["Title"]
report["tagsAfterUpdate"] = info["Tags"]

image = CreateUploadImageRequest.CreateUploadImageRequest()
image.set_ImageType("cover")
image.set_ImageExt("png")
image_answer = call(vod, image)
image_address, image_auth = decode(image_answer)
bucket_for(image_address, image_auth).put_object(image_address["FileName"], b"\x89PNG\r\n\x1a\n" + b"0" * 64)
report["imageStored"] = owner.get_object(image_address["FileName"]).read().startswith(b"\x89PNG")
report["imageURL"] = image_answer["ImageURL"]

abandoned = owner.init_multipart_upload("sv/abandoned.mp4").upload_id
report["openUploadsBeforeAbort"] = len(owner.list_multipart_uploads().upload_list)
owner.abort_multipart_upload("sv/abandoned.mp4", abandoned)
report["openUploadsAfterAbort"] = len(owner.list_multipart_uploads().upload_list)

report["duplicateReferenceCode"] = server_error_code(lambda: call(vod, create))


def create_code(title="ok", file_name="clip.mp4", tags=None):
    """The error code of a CreateUploadVideo with these values, or None."""
    request = CreateUploadVideoRequest.CreateUploadVideoRequest()
    request.set_Title(title)
    request.set_FileName(file_name)
    if tags is not None:
        request.set_Tags(tags)
    return server_error_code(lambda: call(vod, request))


report["limitCodes"] = [create_code(title="x" * 129), create_code(title="clip \U0001F3AC"),
                        create_code(file_name="notes.txt"), create_code(tags=",".join(["t"] * 17)),
                        create_code(tags="y" * 33), create_code(title="x" * 128)]
no_type = CreateUploadImageRequest.CreateUploadImageRequest()
no_type.set_ImageExt("png")
report["imageWithoutTypeCode"] = server_error_code(lambda: call(vod, no_type))
report["wrongVODSecretCode"] = server_error_code(
    lambda: call(AcsClient(key_id, "wrong", "cn-shanghai", port=port, auto_retry=False), get))

delete = DeleteVideoRequest.DeleteVideoRequest()
delete.set_VideoIds(video_id)
call(vod, delete)
report["afterDeleteCode"] = server_error_code(lambda: call(vod, get))
print(json.dumps(report))
