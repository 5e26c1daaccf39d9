package dev.dedup.store.dynamodb;

import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * A client on the emulator that loses replies on cue, for faults the proxy cannot aim at one request: the
 * {@code n}-th {@code PutItem} is written and then fails as a lost reply would (an {@code SdkClientException}, after
 * the SDK gave up retrying), and deletes can be made to fail before they are sent.
 */
final class ReplyLosingDynamoDbClient implements DynamoDbClient {
    private final DynamoDbClient emulator;
    private final AtomicInteger puts = new AtomicInteger();
    private volatile int losePut = -1;
    private volatile boolean deletesFail;

    ReplyLosingDynamoDbClient(DynamoDbClient emulator) {
        this.emulator = emulator;
    }

    /** The {@code n}-th put from now (1 = the next) is written, and its caller is told the connection broke. */
    void loseReplyOfPut(int n) {
        losePut = puts.get() + n;
    }

    void failDeletes(boolean fail) {
        deletesFail = fail;
    }

    @Override
    public PutItemResponse putItem(PutItemRequest request) {
        PutItemResponse response = emulator.putItem(request);
        if (puts.incrementAndGet() == losePut) {
            throw SdkClientException.create("the reply was lost (injected)");
        }
        return response;
    }

    @Override
    public DeleteItemResponse deleteItem(DeleteItemRequest request) {
        if (deletesFail) {
            throw SdkClientException.create("connection refused (injected)");
        }
        return emulator.deleteItem(request);
    }

    @Override
    public GetItemResponse getItem(GetItemRequest request) {
        return emulator.getItem(request);
    }

    @Override
    public UpdateItemResponse updateItem(UpdateItemRequest request) {
        return emulator.updateItem(request);
    }

    @Override
    public DescribeTableResponse describeTable(DescribeTableRequest request) {
        return emulator.describeTable(request);
    }

    @Override
    public String serviceName() {
        return emulator.serviceName();
    }

    @Override
    public void close() {}
}
